/**
 * The text of a workflow step's prompt and of a reviewer's answer: written by
 * the server's run executor (modules/runs/agent-prompts.ts) and read back by
 * the sandbox model (@codeloom/sandbox-model), so the format lives here once.
 *
 * A step's user message:
 *
 *     Task: <task>
 *     Language: <language>                  (when the run names one)
 *     Requirements:                         (when there are any)
 *     - <key>: <value>
 *
 *     ## Output of the <agent> (step <n>[, revision <i>])
 *     <that step's output>
 *
 * A reviewer answers with a line `VERDICT: approve` or
 * `VERDICT: changes_requested`, then one `- ` line per finding.
 */
export const TASK_LABEL = 'Task:';
export const LANGUAGE_LABEL = 'Language:';
export const REQUIREMENTS_LABEL = 'Requirements:';
/** Starts the heading of an earlier step's output: `## Output of the coder (step 2)`. */
export const OUTPUT_HEADING = '## Output of the';
export const VERDICT_LABEL = 'VERDICT:';
/** Starts a requirement line and a review's finding line. */
export const LIST_ITEM = '- ';

export const VERDICTS = ['approve', 'changes_requested'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** An earlier step's output as the prompt shows it; `index` counts from 0, `iteration` is the review-loop pass (0 first). */
export interface PromptStepOutput {
  agent: string;
  index: number;
  iteration: number;
  output: string;
}

export interface AgentPrompt {
  task: string;
  language?: string | undefined;
  requirements: Record<string, unknown>;
  /** Earlier outputs to show, oldest first. */
  earlier: readonly PromptStepOutput[];
}

/** Line breaks as JavaScript's multiline regexes see them (readAgentPrompt's `^` matches after each). */
const LINE_BREAK = /\r\n|[\n\r\u2028\u2029]/g;

/**
 * A requirement or the language: request text that must stay inside its own
 * line item, so every further line of it is indented and can never read as
 * `## Output of the …`, `Task:`, `Language:` or `Requirements:`.
 */
const item = (text: string) => text.replace(LINE_BREAK, '$&  ');

/** The task keeps its lines, but none of them may pass for an earlier step's output heading. */
const taskText = (text: string) => text.replace(/(\r\n|[\n\r\u2028\u2029])(?=## Output of the)/g, '$1 ');

/** A step's user message: the task, the language, the requirements and every earlier output, in order. */
export function writeAgentPrompt(prompt: AgentPrompt): string {
  const reqs = Object.entries(prompt.requirements).map(([k, v]) => `${LIST_ITEM}${item(`${k}: ${String(v)}`)}`);
  const parts = [
    `${TASK_LABEL} ${taskText(prompt.task)}`,
    ...(prompt.language ? [`${LANGUAGE_LABEL} ${item(prompt.language)}`] : []),
    ...(reqs.length ? [REQUIREMENTS_LABEL, ...reqs] : []),
    ...prompt.earlier.map((s) => `\n${OUTPUT_HEADING} ${s.agent} (step ${s.index + 1}${s.iteration ? `, revision ${s.iteration}` : ''})\n${s.output}`),
  ];
  return parts.join('\n');
}

/** One earlier output read back from a prompt. */
export interface PromptSection {
  agent: string;
  text: string;
}

export interface ReadPrompt {
  /** What to build: the text after `Task:` up to `Language:`/`Requirements:` when there is one, else the whole text before the outputs. */
  task: string;
  /** The earlier outputs, oldest first. */
  outputs: PromptSection[];
}

/** `## Output of the <agent> …` headings (see OUTPUT_HEADING). */
const SECTION = /^## Output of the ([a-z]+)\b[^\n]*$/gm;
/** `Task:` at a line start (see TASK_LABEL). */
const TASK = /^Task: ?/m;
/** Where the task ends: the next `Language:` or `Requirements:` line. */
const AFTER_TASK = /\n(?=(?:Language|Requirements):)/;

/** The task and the earlier outputs of a step's user message; a plain prompt is all task and no outputs. */
export function readAgentPrompt(text: string): ReadPrompt {
  const headings = [...text.matchAll(SECTION)];
  const outputs = headings.map((h, i) => {
    const start = h.index! + h[0].length + 1;
    const end = i + 1 < headings.length ? headings[i + 1]!.index! : text.length;
    return { agent: h[1]!, text: text.slice(start, end).replace(/\n+$/, '') };
  });
  const head = headings.length ? text.slice(0, headings[0]!.index) : text;
  const task = TASK.test(head)
    ? head.slice(head.search(TASK)).replace(/^Task: ?/, '').split(AFTER_TASK)[0]!.trim()
    : head.trim();
  return { task, outputs };
}

export function verdictLine(verdict: Verdict): string {
  return `${VERDICT_LABEL} ${verdict}`;
}

/** A review: the verdict line, then one line per finding. */
export function writeReview(verdict: Verdict, findings: readonly string[]): string {
  return [verdictLine(verdict), ...findings.map((f) => `${LIST_ITEM}${f}`), ''].join('\n');
}

/**
 * A reviewer's verdict. An answer without a `VERDICT:` line is NOT approval: it counts as `changes_requested`
 * (the run's max_iterations still bounds the loop), so a reviewer that did not follow the format never lets
 * work through unreviewed.
 */
export function parseVerdict(output: string): Verdict {
  const m = /VERDICT:\s*(approve|changes[_ ]requested)/i.exec(output);
  return m && m[1]!.toLowerCase() === 'approve' ? 'approve' : 'changes_requested';
}

/** Whether a text is a review: one of its lines starts with `VERDICT:`. */
export function isReview(text: string): boolean {
  return /^VERDICT:/m.test(text);
}

/** Whether a review asks for changes: a line `VERDICT: changes_requested` (or `changes requested`, any case). */
export function asksForChanges(review: string): boolean {
  return /^VERDICT:\s*changes[_ ]requested/im.test(review);
}

/** A review's findings: its `- ` lines without the dash. */
export function reviewFindings(review: string): string[] {
  return review.split('\n').filter((l) => l.startsWith(LIST_ITEM)).map((l) => l.slice(LIST_ITEM.length));
}
