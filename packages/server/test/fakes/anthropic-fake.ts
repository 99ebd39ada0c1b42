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
import { startFakeVendor, type FakeOptions, type FakeVendor, type ReplyContext, type VendorFormat } from './fake-vendor.js';

export type { FakeOptions, FakeScript, FakeUsage, FakeVendor, RecordedRequest } from './fake-vendor.js';

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
      content: [{ type: 'text', text }],
      stop_reason: ctx.finishReason ?? 'end_turn',
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
    return [
      frame('content_block_stop', { type: 'content_block_stop', index: 0 }),
      frame('message_delta', { type: 'message_delta', delta: { stop_reason: ctx.finishReason ?? 'end_turn', stop_sequence: null }, ...(ctx.omitUsage ? {} : { usage: { output_tokens: ctx.usage.completionTokens } }) }),
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
