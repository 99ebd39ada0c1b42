import { resolveLanguage, inferLanguage } from '@codeloom/protocol';
import { readConversation } from './conversation.js';
import { projectFiles as project } from './languages/index.js';
import { analyzePrompt } from './prompt-analysis.js';
import { buildSpec } from './project-files.js';
import type { SandboxCall, SandboxToolCall } from './types.js';

/**
 * The sandbox model as an engineer (a deterministic template model, not AI): offered the engineer's tools
 * (list_files, write_file, run, finish) in a step of agent type `engineer`, it
 *   1. lists the workspace,
 *   2. writes its template project for the task, with tests, one write_file per file,
 *   3. runs the language's checks (`run` with the command `checks`),
 *   4. finishes, saying whether the last run passed.
 * Which of these comes next follows from how many tool calls the conversation holds, so the same
 * conversation always gives the same call.
 */
const NEEDED = ['list_files', 'write_file', 'run', 'finish'];

export function isEngineerCall(call: SandboxCall): boolean {
  const names = new Set((call.tools ?? []).map((t) => t.name));
  return call.hints?.agentType === 'engineer' && NEEDED.every((n) => names.has(n)) && call.toolChoice !== 'none';
}

function fnv(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

export function engineerToolCall(call: SandboxCall): SandboxToolCall {
  const firstUser = call.messages.find((m) => m.role === 'user');
  const conversation = readConversation(firstUser ? [firstUser] : []);
  const hinted = call.hints?.language;
  const language = (typeof hinted === 'string' && resolveLanguage(hinted)) || inferLanguage(conversation.task) || 'typescript';
  const spec = buildSpec(analyzePrompt(conversation.task), language, { ...(call.hints?.context ?? {}), includeTests: true });
  const files = project(spec);
  const made = call.messages.flatMap((m) => m.toolCalls ?? []).length;
  const step = (name: string, args: unknown): SandboxToolCall => {
    const json = JSON.stringify(args);
    return { id: `call_engineer${made}_${fnv(`${name}\u0000${json}`)}`, name, arguments: json };
  };
  if (made === 0) return step('list_files', {});
  if (made <= files.length) {
    const f = files[made - 1]!;
    return step('write_file', { path: f.path, content: f.content });
  }
  if (made === files.length + 1) return step('run', { command: 'checks' });
  const last = [...call.messages].reverse().find((m) => m.role === 'tool');
  const passed = last ? /^\[exit 0\]$/m.test(last.content) : false;
  return step('finish', {
    summary: `Wrote ${files.length} file${files.length === 1 ? '' : 's'} (${files.map((f) => f.path).join(', ')}) and ran the checks: ${passed ? 'they pass' : 'they did not pass'}. Written by the Codeloom sandbox model, a deterministic template model (not AI).`,
  });
}
