import { randomBytes } from 'node:crypto';
import type { ChatMessage, ToolCall } from '../../providers/conversation.js';
import type { ModelCallResult } from '../generate/model-call.js';
import type { ResponsesCallSpec } from './responses-request.js';

/**
 * The outbound codec of OpenAI's Responses API: output items, the `response` object and its status, as the
 * `openai` SDK reads them (its types in node_modules/openai/resources/responses/responses.d.ts). The server
 * does not send `output_text`: that is the SDK's own convenience, computed from the output items.
 */

/** OpenAI-style ids: a prefix and 32 hex digits (`resp_…`, `msg_…`, `fc_…`, `call_…`). */
export const wireId = (prefix: 'resp' | 'msg' | 'fc' | 'call') => `${prefix}_${randomBytes(16).toString('hex')}`;

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';
export interface MessageItem { type: 'message'; id: string; status: ItemStatus; role: 'assistant'; content: Array<{ type: 'output_text'; text: string; annotations: never[]; logprobs?: never[] }> }
export interface FunctionCallItem { type: 'function_call'; id: string; call_id: string; name: string; arguments: string; status: ItemStatus }
export type OutputItem = MessageItem | FunctionCallItem;

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** Our finish reason as the response's status and incomplete_details. */
export function statusOf(finishReason: string): { status: 'completed' | 'incomplete'; incomplete_details: { reason: string } | null } {
  if (finishReason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content-filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

export const messageItem = (id: string, text: string, status: ItemStatus): MessageItem =>
  ({ id, type: 'message', status, content: [{ type: 'output_text', annotations: [], logprobs: [], text }], role: 'assistant' });

/** Output items of a finished call (not streamed): its text as one message, then one function_call item per tool call. */
export function outputItems(result: Pick<ModelCallResult, 'text' | 'toolCalls' | 'finishReason'>): OutputItem[] {
  const itemStatus = statusOf(result.finishReason).status;
  const items: OutputItem[] = [];
  if (result.text !== '' || !result.toolCalls?.length) items.push(messageItem(wireId('msg'), result.text, itemStatus));
  for (const c of result.toolCalls ?? []) items.push({ id: wireId('fc'), type: 'function_call', status: itemStatus, arguments: c.arguments, call_id: c.id || wireId('call'), name: c.name });
  return items;
}

/** Output items as the conversation goes on from them: one assistant turn with the text and the calls. */
export function outputMessages(items: readonly OutputItem[]): ChatMessage[] {
  const text = items.flatMap((i) => (i.type === 'message' ? i.content.map((c) => c.text) : [])).join('');
  const calls: ToolCall[] = items.flatMap((i) => (i.type === 'function_call' ? [{ id: i.call_id, name: i.name, arguments: i.arguments }] : []));
  if (text === '' && calls.length === 0) return [];
  return [{ role: 'assistant', content: text, ...(calls.length ? { toolCalls: calls } : {}) }];
}

export interface ResponseHead { id: string; createdAt: number; model: string }

export interface ResponseUsage {
  input_tokens: number; input_tokens_details: { cached_tokens: number };
  output_tokens: number; output_tokens_details: { reasoning_tokens: number }; total_tokens: number;
}

export const toUsage = (u: { promptTokens: number; completionTokens: number }): ResponseUsage => ({
  input_tokens: u.promptTokens, input_tokens_details: { cached_tokens: 0 },
  output_tokens: u.completionTokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: u.promptTokens + u.completionTokens,
});

/** OpenAI's `response` object, in the field order OpenAI sends it. */
export function responseObject(head: ResponseHead, spec: ResponsesCallSpec, state: {
  status: ResponseStatus; output: OutputItem[]; usage: ResponseUsage | null;
  incomplete_details?: { reason: string } | null; error?: { code: string; message: string } | null; completedAt?: number | null;
}) {
  return {
    id: head.id,
    object: 'response' as const,
    created_at: head.createdAt,
    status: state.status,
    background: false,
    completed_at: state.completedAt ?? null,
    error: state.error ?? null,
    incomplete_details: state.incomplete_details ?? null,
    instructions: spec.instructions,
    max_output_tokens: spec.maxTokens ?? null,
    model: head.model,
    output: state.output,
    parallel_tool_calls: spec.echo.parallel_tool_calls,
    previous_response_id: spec.previousResponseId,
    reasoning: { effort: null, summary: null },
    store: spec.store,
    temperature: spec.temperature ?? null,
    text: spec.echo.text,
    tool_choice: spec.echo.tool_choice,
    tools: spec.echo.tools,
    top_p: spec.topP ?? null,
    truncation: 'disabled',
    usage: state.usage,
    user: null,
    metadata: spec.metadata,
  };
}
export type ResponseObject = ReturnType<typeof responseObject>;
