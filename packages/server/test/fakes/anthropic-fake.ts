/**
 * Fake Anthropic Messages API: `POST /v1/messages`, answering JSON or SSE in
 * Anthropic's exact event sequence (message_start, content_block_start, ping,
 * content_block_delta with text_delta ..., content_block_stop, message_delta
 * with stop_reason and cumulative usage.output_tokens, message_stop). Errors
 * use `{"type":"error","error":{"type","message"}}`, including 529
 * overloaded_error; in-band failures are an `event: error` frame.
 *
 *   const fake = await startAnthropicFake();
 *   createAnthropicProvider({ baseUrl: fake.url, ... }) // fake.url is the origin
 *   fake.script({ failNext: { count: 1, status: 529 } });
 *   fake.requests[0].headers['x-api-key']; fake.requests[0].body.max_tokens;
 *
 * The full list of script fields is in fake-vendor.ts.
 */
import { argumentPieces, startFakeVendor, type FakeOptions, type FakeVendor, type ReplyContext, type VendorFormat } from './fake-vendor.js';

export type { FakeOptions, FakeScript, FakeToolCall, FakeUsage, FakeVendor, RecordedRequest } from './fake-vendor.js';

/** The stop reason: scripted, else `tool_use` for an answer with tool calls, else `end_turn`. */
const stopOf = (ctx: ReplyContext) => ctx.finishReason ?? (ctx.toolCalls.length ? 'tool_use' : 'end_turn');
/** A scripted call's id as Anthropic spells them (toolu_…), unless the script named one. */
const toolId = (id: string) => id.replace(/^call_fake/, 'toolu_fake');

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

const frame = (event: string, payload: unknown) => `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`;

export const anthropicFormat: VendorFormat = {
  path: '/v1/messages',
  apiKeyOf: (headers) => headers['x-api-key'] as string | undefined,
  errorBody(status, message) {
    return { type: 'error', error: { type: ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'), message } };
  },
  json(ctx: ReplyContext, text) {
    return {
      id: `msg_fake${ctx.id}`,
      type: 'message',
      role: 'assistant',
      model: ctx.model,
      content: [
        ...(text || !ctx.toolCalls.length ? [{ type: 'text', text }] : []),
        ...ctx.toolCalls.map((c) => ({ type: 'tool_use', id: toolId(c.id), name: c.name, input: JSON.parse(c.arguments) })),
      ],
      stop_reason: stopOf(ctx),
      stop_sequence: null,
      ...(ctx.omitUsage ? {} : { usage: { input_tokens: ctx.usage.promptTokens, output_tokens: ctx.usage.completionTokens } }),
    };
  },
  streamHead(ctx) {
    const message = {
      id: `msg_fake${ctx.id}`,
      type: 'message',
      role: 'assistant',
      model: ctx.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      ...(ctx.omitUsage ? {} : { usage: { input_tokens: ctx.usage.promptTokens, output_tokens: 1 } }),
    };
    return [
      frame('message_start', { type: 'message_start', message }),
      frame('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      frame('ping', { type: 'ping' }),
    ];
  },
  streamDelta(_ctx, text) {
    return frame('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
  },
  streamTail(ctx) {
    // Tool calls: one tool_use block each after the text block (content_block_start with the id, name and an empty input,
    // an empty input_json_delta, then the input's JSON in pieces, content_block_stop), as Anthropic streams them.
    const tools = ctx.toolCalls.flatMap((c, i) => [
      frame('content_block_start', { type: 'content_block_start', index: i + 1, content_block: { type: 'tool_use', id: toolId(c.id), name: c.name, input: {} } }),
      frame('content_block_delta', { type: 'content_block_delta', index: i + 1, delta: { type: 'input_json_delta', partial_json: '' } }),
      ...argumentPieces(c.arguments).map((piece) => frame('content_block_delta', { type: 'content_block_delta', index: i + 1, delta: { type: 'input_json_delta', partial_json: piece } })),
      frame('content_block_stop', { type: 'content_block_stop', index: i + 1 }),
    ]);
    return [
      frame('content_block_stop', { type: 'content_block_stop', index: 0 }),
      ...tools,
      frame('message_delta', { type: 'message_delta', delta: { stop_reason: stopOf(ctx), stop_sequence: null }, ...(ctx.omitUsage ? {} : { usage: { output_tokens: ctx.usage.completionTokens } }) }),
      frame('message_stop', { type: 'message_stop' }),
    ];
  },
  lengthReason: 'max_tokens',
  streamError(_ctx, message) {
    return frame('error', { type: 'error', error: { type: 'overloaded_error', message } });
  },
};

export function startAnthropicFake(options?: FakeOptions): Promise<FakeVendor> {
  return startFakeVendor(anthropicFormat, options);
}
