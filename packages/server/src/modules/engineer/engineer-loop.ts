import { AppError, CancelledError } from '../../errors.js';
import type { ChatMessage, ToolCall, ToolDefinition } from '../../providers/conversation.js';
import { ENGINEER_TOOLS, ENGINEER_TOOL_NAMES, runTool, TOOL_OUTPUT_MAX, type ToolContext, type ToolOutcome } from './engineer-tools.js';
import { parseTextTurn, TEXT_PROTOCOL } from './text-protocol.js';
import { headAndTail } from './workspace.js';

/**
 * The engineer's loop (docs/agents.md "The engineer"): model call → tool calls → tool results, until the
 * model calls `finish`, the run's `max_steps` is reached, or a ceiling, the wall time or a cancel ends it.
 * With native tool calling the model gets the tools as definitions; without (a provider that declares no
 * tools, such as llama `local`), it is told the text protocol (text-protocol.ts) and its one fenced command
 * per turn is read as the call.
 */

export const DEFAULT_MAX_STEPS = 30;
export const MAX_STEPS_LIMIT = 200;

export interface TurnResult { text: string; toolCalls?: ToolCall[] | undefined }

export interface EngineerEvents {
  toolCall(e: { step: number; call_id: string; name: string; arguments: unknown }): unknown;
  toolResult(e: { step: number; call_id: string; ok: boolean; output: string; duration_ms: number }): unknown;
}

export interface EngineerLoopOptions {
  /** The system prompt's role line and the user message (the task, the requirements, earlier steps). */
  role: string;
  prompt: string;
  native: boolean;
  maxSteps: number;
  signal: AbortSignal;
  /** One model call (reserving within the run's ceilings; throws budget_exceeded, CancelledError, …). */
  turn(messages: ChatMessage[], tools: ToolDefinition[] | undefined): Promise<TurnResult>;
  tools: ToolContext;
  events: EngineerEvents;
}

export interface EngineerOutcome {
  summary: string;
  steps: number;
  /** The last `run` (its command, exit status and output tail), for a reviewer after it. */
  lastRun?: ToolOutcome['run'];
  /** The transcript of calls, for the step's output. */
  log: string[];
}

const ROLE_TAIL = `Work in the workspace with the tools: look at the files, write or edit them, run the tests with \`run\`, read failures and fix them; call \`finish\` with a short summary when the tests pass. Paths are relative to the workspace root.`;

export function engineerSystemPrompt(role: string, native: boolean): string {
  return [role, ROLE_TAIL, ...(native ? [] : [TEXT_PROTOCOL])].join('\n\n');
}

const argsOf = (raw: string): unknown => { try { return JSON.parse(raw); } catch { return raw.slice(0, 2_000); } };

export async function engineerLoop(o: EngineerLoopOptions): Promise<EngineerOutcome> {
  const messages: ChatMessage[] = [{ role: 'system', content: engineerSystemPrompt(o.role, o.native) }, { role: 'user', content: o.prompt }];
  const log: string[] = [];
  let lastRun: ToolOutcome['run'];
  let callSeq = 0;
  for (let step = 1; ; step++) {
    if (o.signal.aborted) throw new CancelledError();
    if (step > o.maxSteps) throw new AppError('max_steps_reached', `The engineer used its ${o.maxSteps} steps (config.max_steps) without calling finish.`);
    compactHistory(messages, HISTORY_CHARS);
    const answer = await o.turn(messages, o.native ? ENGINEER_TOOLS : undefined);
    let calls: ToolCall[];
    if (o.native) {
      calls = answer.toolCalls ?? [];
      messages.push({ role: 'assistant', content: answer.text, ...(calls.length ? { toolCalls: calls } : {}) });
      if (!calls.length) {
        log.push(`[${step}] (no tool call) ${headAndTail(answer.text, 300)}`);
        messages.push({ role: 'user', content: 'Call one of the tools (finish when the work is done).' });
        continue;
      }
    } else {
      messages.push({ role: 'assistant', content: answer.text });
      const parsed = parseTextTurn(answer.text);
      if ('error' in parsed) {
        log.push(`[${step}] (format) ${parsed.error}`);
        messages.push({ role: 'user', content: `Format error: ${parsed.error}\n\n${TEXT_PROTOCOL}` });
        continue;
      }
      calls = [{ id: `call_${step}_${++callSeq}`, name: parsed.name, arguments: parsed.arguments }];
    }
    const results: string[] = [];
    for (const call of calls) {
      if (o.signal.aborted) throw new CancelledError();
      const id = call.id || `call_${step}_${++callSeq}`;
      await o.events.toolCall({ step, call_id: id, name: call.name, arguments: argsOf(call.arguments) });
      const started = Date.now();
      const outcome = await runTool(call.name, call.arguments, o.tools);
      if (o.signal.aborted) throw new CancelledError();
      const output = headAndTail(outcome.output, TOOL_OUTPUT_MAX);
      await o.events.toolResult({ step, call_id: id, ok: outcome.ok, output, duration_ms: Date.now() - started });
      log.push(`[${step}] ${call.name} → ${outcome.ok ? 'ok' : 'failed'}: ${headAndTail(outcome.output, 300)}`);
      if (outcome.run) lastRun = outcome.run;
      if (outcome.finished !== undefined) return { summary: outcome.finished, steps: step, ...(lastRun ? { lastRun } : {}), log };
      if (o.native) messages.push({ role: 'tool', toolCallId: id, content: output, ...(outcome.ok ? {} : { isError: true }) });
      else results.push(`${call.name} ${outcome.ok ? 'succeeded' : 'failed'}:\n${output}`);
    }
    if (!o.native) messages.push({ role: 'user', content: results.join('\n\n') });
  }
}

/** Characters of conversation the loop keeps before it shortens old tool outputs and file contents (about 40k tokens). */
export const HISTORY_CHARS = 160_000;
/** The most recent messages, always kept whole. */
const KEEP_RECENT = 8;
const ELIDED = 400;

const sizeOf = (m: ChatMessage) => m.content.length + (m.toolCalls?.reduce((n, c) => n + c.arguments.length, 0) ?? 0);

/**
 * Keeps a long loop's conversation within `budget` characters: oldest first (never the system prompt, the task
 * or the last KEEP_RECENT messages), tool outputs are cut to their head and tail and the long string
 * arguments of earlier calls (a written file's content) are replaced by a note. The model can read a file again.
 */
export function compactHistory(messages: ChatMessage[], budget: number): void {
  let total = messages.reduce((n, m) => n + sizeOf(m), 0);
  for (let i = 2; i < messages.length - KEEP_RECENT && total > budget; i++) {
    const m = messages[i]!;
    const before = sizeOf(m);
    if ((m.role === 'tool' || m.role === 'user') && m.content.length > ELIDED * 2) m.content = headAndTail(m.content, ELIDED);
    if (m.toolCalls) m.toolCalls = m.toolCalls.map((c) => (c.arguments.length > ELIDED * 2 ? { ...c, arguments: elideArguments(c.arguments) } : c));
    total -= before - sizeOf(m);
  }
}

function elideArguments(raw: string): string {
  try {
    const args = JSON.parse(raw) as Record<string, unknown>;
    if (typeof args !== 'object' || args === null || Array.isArray(args)) return raw;
    return JSON.stringify(Object.fromEntries(Object.entries(args).map(([k, v]) => [k, typeof v === 'string' && v.length > ELIDED ? `[${v.length} characters, left out of the history]` : v])));
  } catch {
    return raw;
  }
}

export { ENGINEER_TOOL_NAMES };
