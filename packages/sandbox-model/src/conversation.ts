import { readAgentPrompt } from '@codeloom/protocol';
import type { SandboxMessage } from './types.js';

/**
 * What the sandbox model (a deterministic template model, not AI) reads out
 * of a conversation. A workflow step's user message looks like
 *   Task: …  / Language: … / Requirements: … / ## Output of the coder (step 2) …
 * (the format of @codeloom/protocol's agent-prompt-format); a plain
 * generation's is the prompt.
 */
export interface StepOutput {
  /** planner, coder, reviewer, …; `assistant` for earlier assistant messages. */
  agent: string;
  text: string;
}

export interface Conversation {
  /** What to build: the Task: section when there is one, else the whole last user message. */
  task: string;
  /** Earlier outputs, oldest first. */
  outputs: StepOutput[];
}

export function readConversation(messages: readonly SandboxMessage[]): Conversation {
  // A workflow step's prompt is the user message with the Task: line; later user messages (a reviewer's check
  // results, a tool loop's nudges) are not the task. Without one, the last user message is the prompt.
  const users = messages.filter((m) => m.role === 'user');
  const user = ([...users].reverse().find((m) => /^Task:/m.test(m.content)) ?? users.at(-1))?.content ?? '';
  const prompt = readAgentPrompt(user);
  const earlier: StepOutput[] = messages.filter((m) => m.role === 'assistant').map((m) => ({ agent: 'assistant', text: m.content }));
  return { task: prompt.task, outputs: [...earlier, ...prompt.outputs] };
}

/** Outputs that are code: a coder step's, or an earlier assistant answer with a fenced block. */
export function coderOutputs(c: Conversation): StepOutput[] {
  return c.outputs.filter((o) => o.agent === 'coder' || o.agent === 'engineer' || (o.agent === 'assistant' && o.text.includes('```')));
}

/** The paths named in ```lang path fences of a text, in order, without repeats. */
export function fencedPaths(text: string): string[] {
  // An engineer's output lists its changes as `- added path` / `- modified path` lines (its diff is one block).
  const changed = [...text.matchAll(/^- (?:added|modified) (\S+)$/gm)].map((m) => m[1]!);
  if (changed.length) return [...new Set(changed)];
  // Paths are echoed (the documenter's README, the reviewer's findings): no control characters.
  const paths = [...text.matchAll(/^ {0,3}(?:`{3,}|~{3,})[\w+#-]* +([^\s`\u0000-\u001f\u007f-\u009f]+)\s*$/gm)].map((m) => m[1]!);
  return [...new Set(paths)];
}
