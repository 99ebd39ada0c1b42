import { LIST_ITEM, verdictLine, writeAgentPrompt, type AgentType, type RunStep } from '@codeloom/protocol';
import type { ChatMessage } from '../../providers/provider.js';

/** Each agent type's role, after MetaGPT's and ChatDev's phases: plan → design → code → review → test → document. */
const ROLES: Record<AgentType, string> = {
  planner: 'You are the planner. Break the task into a short numbered plan of concrete implementation steps. Do not write code.',
  architect: 'You are the software architect. From the task and the plan, describe the design: modules and files, data model, interfaces or endpoints, and key decisions. You may add a docs/DESIGN.md file as a fenced block.',
  coder: 'You are the engineer. Write the complete implementation as files, one fenced code block per file with the language and the path in the info string (```typescript src/app.ts). If a reviewer requested changes, address every finding.',
  reviewer: `You are the code reviewer. Review the latest code against the task. Answer with a line "${verdictLine('approve')}" or "${verdictLine('changes_requested')}", then one "${LIST_ITEM}" line per finding.`,
  tester: 'You are the test engineer. Write tests for the latest code in the language\'s usual test framework, one fenced code block per file with the path in the info string.',
  engineer: 'You are the engineer. You work on the files of a workspace with tools, run the tests in a sandbox and fix what fails until they pass.',
  documenter: 'You are the technical writer. Write a README.md for the result (what it is, how to install, run and test it) as a fenced block: ```markdown README.md.',
};

export const FILE_PRODUCERS: ReadonlySet<AgentType> = new Set(['architect', 'coder', 'tester', 'documenter']);

/** The task, the requirements and every earlier step's output, in order (the text format: @codeloom/protocol's agent-prompt-format). */
export function buildAgentMessages(agent: AgentType, task: string, requirements: Record<string, unknown>, earlier: RunStep[], language: string | undefined): ChatMessage[] {
  const user = writeAgentPrompt({ task, language, requirements, earlier: earlier.filter((s) => s.status === 'succeeded') });
  return [{ role: 'system', content: ROLES[agent] }, { role: 'user', content: user }];
}

/** The run executor reads a reviewer's verdict with the same format module. */
export { parseVerdict } from '@codeloom/protocol';
