import type { ChatMessage } from '../provider.js';

/**
 * What the sandbox model (a deterministic template model, not AI) reads out
 * of a conversation. A workflow step's user message looks like
 *   Task: …  / Language: … / Requirements: … / ## Output of the coder (step 2) …
 * (see modules/runs/agent-prompts.ts); a plain generation's is the prompt.
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

const SECTION = /^## Output of the ([a-z]+)\b[^\n]*$/gm;

export function readConversation(messages: readonly ChatMessage[]): Conversation {
  const user = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const headings = [...user.matchAll(SECTION)];
  const outputs: StepOutput[] = messages.filter((m) => m.role === 'assistant').map((m) => ({ agent: 'assistant', text: m.content }));
  headings.forEach((h, i) => {
    const start = h.index! + h[0].length + 1;
    const end = i + 1 < headings.length ? headings[i + 1]!.index! : user.length;
    outputs.push({ agent: h[1]!, text: user.slice(start, end).replace(/\n+$/, '') });
  });
  const head = headings.length ? user.slice(0, headings[0]!.index) : user;
  const task = /^Task: ?/m.test(head)
    ? head.slice(head.search(/^Task: ?/m)).replace(/^Task: ?/, '').split(/\n(?=(?:Language|Requirements):)/)[0]!.trim()
    : head.trim();
  return { task, outputs };
}

/** Outputs that are code: a coder step's, or an earlier assistant answer with a fenced block. */
export function coderOutputs(c: Conversation): StepOutput[] {
  return c.outputs.filter((o) => o.agent === 'coder' || (o.agent === 'assistant' && o.text.includes('```')));
}

/** The paths named in ```lang path fences of a text, in order, without repeats. */
export function fencedPaths(text: string): string[] {
  const paths = [...text.matchAll(/^ {0,3}(?:`{3,}|~{3,})[\w+#-]* +([^\s`]+)\s*$/gm)].map((m) => m[1]!);
  return [...new Set(paths)];
}
