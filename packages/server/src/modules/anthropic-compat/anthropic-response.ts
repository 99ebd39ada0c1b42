import type { FinishReason } from '../../providers/provider.js';
import type { ChatCallResult } from '../generate/chat-call.js';

/**
 * The Messages API's outbound codec: a call's result as Anthropic's `message` object, its finish as
 * `stop_reason` / `stop_sequence`, and tool call ids as `toolu_…` ids.
 */

/** The message id of a call whose history record is `gen_X`: `msg_X` (the same random part). */
export const messageIdFor = (generationId: string): string => `msg_${generationId.replace(/^gen_/, '')}`;

/**
 * A tool call's id as Anthropic spells them: `toolu_…` (an OpenAI-style `call_X` becomes `toolu_X`; a call
 * without an id gets one from its message and place). The client sends it back in its tool_use and
 * tool_result blocks, so both sides of the next call carry the same id.
 */
export function toolUseId(id: string, messageId: string, index: number): string {
  if (id.startsWith('toolu_')) return id;
  if (id === '') return `toolu_${messageId.replace(/^msg_/, '')}_${index}`;
  return `toolu_${id.replace(/^call_/, '')}`;
}

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

/** Anthropic's stop_reason for ours; `stop_sequence` only when the provider said which sequence it stopped at. */
export function toStopReason(finishReason: FinishReason, stopSequence: string | undefined): { stop_reason: StopReason; stop_sequence: string | null } {
  if (finishReason === 'tool-calls') return { stop_reason: 'tool_use', stop_sequence: null };
  if (finishReason === 'length') return { stop_reason: 'max_tokens', stop_sequence: null };
  if (finishReason === 'content-filter') return { stop_reason: 'refusal', stop_sequence: null };
  if (stopSequence !== undefined) return { stop_reason: 'stop_sequence', stop_sequence: stopSequence };
  return { stop_reason: 'end_turn', stop_sequence: null };
}

/** A tool call's arguments as `input`: the object the model wrote (one cut short by max_tokens is `{}`). */
export function toolInput(args: string): Record<string, unknown> {
  try {
    const input: unknown = args.trim() === '' ? {} : JSON.parse(args);
    return typeof input === 'object' && input !== null && !Array.isArray(input) ? input as Record<string, unknown> : {};
  } catch {
    return {};
  }
}

/** Usage as Anthropic reports it: Codeloom caches no prompts (the cache counts are 0) and has one service tier. */
export const usageOf = (input: number, output: number) => ({
  input_tokens: input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0,
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, output_tokens: output, service_tier: 'standard',
});

/** The whole answer as Anthropic's message: its text block (when there is text, or nothing else), then its tool_use blocks. */
export function toMessage(id: string, r: ChatCallResult) {
  const calls = r.toolCalls ?? [];
  const content: Array<Record<string, unknown>> = [];
  if (r.text !== '' || calls.length === 0) content.push({ type: 'text', text: r.text });
  calls.forEach((c, i) => content.push({ type: 'tool_use', id: toolUseId(c.id, id, i), name: c.name, input: toolInput(c.arguments) }));
  return {
    id, type: 'message' as const, role: 'assistant' as const, model: r.model.id, content,
    ...toStopReason(r.finishReason, r.stopSequence),
    usage: usageOf(r.usage.promptTokens, r.usage.completionTokens),
  };
}
