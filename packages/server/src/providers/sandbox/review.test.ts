import type { AgentType, RunStep } from '@codeloom/protocol';
import { coderOutputs, fencedPaths, readConversation } from '@codeloom/sandbox-model';
import { describe, expect, it } from 'vitest';
import { parseFencedFiles } from '../../modules/generate/parse-fenced-files.js';
import { buildAgentMessages, parseVerdict } from '../../modules/runs/agent-prompts.js';
import { createSandboxProvider } from './sandbox-provider.js';

const sandbox = createSandboxProvider();

/** Plays a workflow the way the run executor does: each step sees the task and every earlier output; a review asking for changes inserts a coder and a reviewer, at most maxIterations times. */
async function play(agents: AgentType[], task: string, maxIterations: number, language = 'typescript'): Promise<RunStep[]> {
  const queue = agents.map((agent) => ({ agent, iteration: 0 }));
  const steps: RunStep[] = [];
  for (let i = 0; i < queue.length; i++) {
    const { agent, iteration } = queue[i]!;
    const messages = buildAgentMessages(agent, task, {}, steps, language);
    const { text } = await sandbox.generate({ model: 'sandbox', messages, hints: { agentType: agent, language } });
    steps.push({ index: i, agent, iteration, status: 'succeeded', output: text } as unknown as RunStep);
    const revisions = steps.filter((s) => s.agent === 'coder' && s.iteration > 0).length;
    if (agent === 'reviewer' && parseVerdict(text) === 'changes_requested' && revisions < maxIterations) {
      queue.splice(i + 1, 0, { agent: 'coder', iteration: iteration + 1 }, { agent: 'reviewer', iteration: iteration + 1 });
    }
  }
  return steps;
}

const verdicts = (steps: RunStep[]) => steps.map((s) => (s.agent === 'reviewer' ? `reviewer:${parseVerdict(s.output!)}` : s.agent));

describe('reading a conversation', () => {
  it('takes the task from a workflow message and the earlier outputs in order', () => {
    const c = readConversation([
      { role: 'system', content: 'You are the reviewer.' },
      { role: 'user', content: 'Task: REST API for todos\nwith paging\nLanguage: go\nRequirements:\n- framework: none\n\n## Output of the planner (step 1)\n1. plan\n\n## Output of the coder (step 2, revision 1)\n```go main.go\npackage main\n```' },
    ]);
    expect(c.task).toBe('REST API for todos\nwith paging');
    expect(c.outputs.map((o) => o.agent)).toEqual(['planner', 'coder']);
    expect(coderOutputs(c)).toHaveLength(1);
    expect(fencedPaths(c.outputs[1]!.text)).toEqual(['main.go']);
  });

  it('takes a plain prompt as the task, and counts earlier assistant answers with code as coder outputs', () => {
    const c = readConversation([{ role: 'user', content: 'CLI for notes' }, { role: 'assistant', content: '```py a.py\nx\n```' }, { role: 'user', content: 'again [review:changes]' }]);
    expect(c.task).toBe('again [review:changes]');
    expect(coderOutputs(c)).toHaveLength(1);
  });
});

describe('the reviewer rule drives a testable review loop', () => {
  it('approves without a marker', async () => {
    expect(verdicts(await play(['coder', 'reviewer'], 'REST API for todos', 3))).toEqual(['coder', 'reviewer:approve']);
  });

  it('[review:changes] requests changes at every review, so max_iterations ends the loop', async () => {
    expect(verdicts(await play(['coder', 'reviewer'], 'CLI for notes [review:changes]', 2))).toEqual([
      'coder', 'reviewer:changes_requested', 'coder', 'reviewer:changes_requested', 'coder', 'reviewer:changes_requested',
    ]);
  });

  it('[review:changes=N] requests N rounds, then approves and says the findings were addressed', async () => {
    const steps = await play(['coder', 'reviewer', 'tester'], 'library for dates [review:changes=2]', 5);
    expect(verdicts(steps)).toEqual(['coder', 'reviewer:changes_requested', 'coder', 'reviewer:changes_requested', 'coder', 'reviewer:approve', 'tester']);
    expect(steps[5]!.output).toContain('The findings of the previous review are addressed.');
  });

  it('answers with the verdict first and one "- " line per finding', async () => {
    const [, review] = await play(['coder', 'reviewer'], 'REST API for todos [review:changes]', 0);
    const lines = review!.output!.trimEnd().split('\n');
    expect(lines[0]).toBe('VERDICT: changes_requested');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines.slice(1)) expect(line).toMatch(/^- \S/);
  });

  it("has the coder answer a review that asked for changes with a revision that adds the tests it asked for", async () => {
    const steps = await play(['coder', 'reviewer'], 'REST API for todos [review:changes=1]', 1);
    const first = parseFencedFiles(steps[0]!.output!, 'typescript').map((f) => f.path);
    const revised = parseFencedFiles(steps[2]!.output!, 'typescript').map((f) => f.path);
    expect(first).not.toContain('test/todos.test.ts');
    expect(revised).toContain('test/todos.test.ts');
    expect(steps[2]!.output).toMatch(/^Revised after the review:\n- addressed: No tests yet/);
    expect(steps[2]!.output).not.toMatch(/^VERDICT/m);
  });
});

describe('the documenter', () => {
  it('lists the files the earlier steps wrote, tests included', async () => {
    const steps = await play(['coder', 'tester', 'documenter'], 'CLI to track expenses', 0, 'python');
    const [readme] = parseFencedFiles(steps[2]!.output!, 'python');
    expect(readme!.path).toBe('README.md');
    for (const path of [...fencedPaths(steps[0]!.output!), ...fencedPaths(steps[1]!.output!)].filter((p) => p !== 'README.md')) {
      expect(readme!.content).toContain(`\`${path}\``);
    }
    expect(readme!.content).toContain('python3 -m unittest');
  });
});
