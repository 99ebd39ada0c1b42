import { writeAgentPrompt } from '@codeloom/protocol';
import { describe, expect, it } from 'vitest';
import { sandboxAnswer } from './answer.js';
import { readConversation } from './conversation.js';
import { reviewText, requestsChanges } from './review.js';
import { buildSpec } from './project-files.js';
import { analyzePrompt } from './prompt-analysis.js';
import type { SandboxCall, SandboxMessage } from './types.js';

const TOOLS = ['list_files', 'read_file', 'write_file', 'edit_file', 'search', 'run', 'finish'].map((name) => ({ name, parameters: { type: 'object', properties: {} } }));

/** Plays the sandbox engineer to its end, answering each call with `result(name)`. */
function play(result: (name: string, args: any) => string, agentType = 'engineer') {
  const messages: SandboxMessage[] = [{ role: 'system', content: 'You are the engineer.' }, { role: 'user', content: writeAgentPrompt({ task: 'a CLI to track expenses', language: 'python', requirements: {}, earlier: [] }) }];
  const calls: Array<{ name: string; args: any }> = [];
  for (let i = 0; i < 40; i++) {
    const call: SandboxCall = { messages, tools: TOOLS, hints: { agentType, language: 'python' } };
    const answer = sandboxAnswer(call);
    if (!answer.toolCall) return { calls, text: answer.pieces.join('') };
    const { id, name, arguments: args } = answer.toolCall;
    calls.push({ name, args: JSON.parse(args) });
    messages.push({ role: 'assistant', content: '', toolCalls: [{ id, name, arguments: args }] });
    if (name === 'finish') break;
    messages.push({ role: 'tool', toolCallId: id, content: result(name, JSON.parse(args)) });
  }
  return { calls, text: '' };
}

describe('the sandbox model as an engineer', () => {
  it('lists, writes its template files with tests, runs the checks and finishes: the same calls every time', () => {
    const pass = play((name) => (name === 'run' ? '$ checks\n[exit 0]\nOK' : 'ok'));
    const names = pass.calls.map((c) => c.name);
    expect(names[0]).toBe('list_files');
    expect(names.slice(1, -2).every((n) => n === 'write_file')).toBe(true);
    expect(names.slice(-2)).toEqual(['run', 'finish']);
    expect(pass.calls.at(-2)!.args).toEqual({ command: 'checks' });
    const paths = pass.calls.filter((c) => c.name === 'write_file').map((c) => c.args.path as string);
    expect(paths.some((p) => /test/.test(p))).toBe(true);
    expect(pass.calls.at(-1)!.args.summary).toMatch(/they pass/);
    expect(play((name) => (name === 'run' ? '$ checks\n[exit 0]\nOK' : 'ok'))).toEqual(pass);
    const fail = play((name) => (name === 'run' ? '$ checks\n[exit 1]\nFAILED' : 'ok'));
    expect(fail.calls.at(-1)!.args.summary).toMatch(/did not pass/);
  });

  it('keeps its other behaviour: outside an engineer step it calls the first tool, then answers the tool result in text', () => {
    const other = play(() => 'result', 'coder');
    expect(other.calls.map((c) => c.name)).toEqual(['list_files']);
    expect(other.text).toMatch(/^The list_files tool returned: result\./);
  });
});

describe('the sandbox reviewer in a verified workflow', () => {
  it('reads the task past the checks report that follows it, so it reviews the code and honours [review:changes]', () => {
    const prompt = writeAgentPrompt({ task: 'REST API for todos [review:changes]', language: 'python', requirements: {}, earlier: [{ agent: 'coder', index: 0, iteration: 0, output: '```python app.py\nprint(1)\n```' }] });
    const messages: SandboxMessage[] = [{ role: 'system', content: 'reviewer' }, { role: 'user', content: prompt }, { role: 'user', content: 'The code was built and its tests run in a sandbox: PASSED (1 tests passed, 0 failed).' }];
    const c = readConversation(messages);
    expect(c.task).toBe('REST API for todos [review:changes]');
    expect(requestsChanges(c)).toBe(true);
    const review = reviewText(c, buildSpec(analyzePrompt(c.task), 'python', {}));
    expect(review).toMatch(/^VERDICT: changes_requested\n/);
    expect(review).not.toMatch(/No code to review yet/);
  });
});
