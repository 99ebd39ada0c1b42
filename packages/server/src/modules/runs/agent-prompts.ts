import type { AgentType, RunStep } from '@codeloom/protocol';
import type { ChatMessage } from '../../providers/provider.js';

/** Each agent type's role, after MetaGPT's and ChatDev's phases: plan → design → code → review → test → document. */
const ROLES: Record<AgentType, string> = {
  planner: 'You are the planner. Break the task into a short numbered plan of concrete implementation steps. Do not write code.',
  architect: 'You are the software architect. From the task and the plan, describe the design: modules and files, data model, interfaces or endpoints, and key decisions. You may add a docs/DESIGN.md file as a fenced block.',
  coder: 'You are the engineer. Write the complete implementation as files, one fenced code block per file with the language and the path in the info string (```typescript src/app.ts). If a reviewer requested changes, address every finding.',
  reviewer: 'You are the code reviewer. Review the latest code against the task. Answer with a line "VERDICT: approve" or "VERDICT: changes_requested", then one "- " line per finding.',
  tester: 'You are the test engineer. Write tests for the latest code in the language\'s usual test framework, one fenced code block per file with the path in the info string.',
  documenter: 'You are the technical writer. Write a README.md for the result (what it is, how to install, run and test it) as a fenced block: ```markdown README.md.',
};

export const FILE_PRODUCERS: ReadonlySet<AgentType> = new Set(['architect', 'coder', 'tester', 'documenter']);

/** The task, the requirements and every earlier step's output, in order. */
export function buildAgentMessages(agent: AgentType, task: string, requirements: Record<string, unknown>, earlier: RunStep[], language: string | undefined): ChatMessage[] {
  const reqs = Object.entries(requirements).map(([k, v]) => `- ${k}: ${String(v)}`);
  const parts = [
    `Task: ${task}`,
    ...(language ? [`Language: ${language}`] : []),
    ...(reqs.length ? ['Requirements:', ...reqs] : []),
    ...earlier.filter((s) => s.status === 'succeeded').map((s) => `\n## Output of the ${s.agent} (step ${s.index + 1}${s.iteration ? `, revision ${s.iteration}` : ''})\n${s.output}`),
  ];
  return [{ role: 'system', content: ROLES[agent] }, { role: 'user', content: parts.join('\n') }];
}

/** A reviewer's verdict; a review without one counts as approval so a chatty model cannot loop a run. */
export function parseVerdict(output: string): 'approve' | 'changes_requested' {
  const m = /VERDICT:\s*(approve|changes[_ ]requested)/i.exec(output);
  return m && m[1]!.toLowerCase().startsWith('changes') ? 'changes_requested' : 'approve';
}
