/**
 * Fake OpenAI-compatible server: `POST /v1/chat/completions`, answering JSON
 * or SSE exactly as OpenAI does (role chunk, `choices[0].delta.content`
 * chunks, a finish_reason chunk, a usage chunk with empty `choices` when the
 * request asked for `stream_options.include_usage`, then `data: [DONE]`).
 * Errors use OpenAI's body `{"error":{"message","type","param","code"}}`. `POST /v1/completions`
 * (legacy completions, with `prompt` and `suffix` for fill-in-the-middle) answers `text_completion`
 * objects and chunks (`choices[0].text`) from the same script.
 *
 *   const fake = await startOpenAIFake();           // or ({ script, record })
 *   createOpenAIProvider({ baseUrl: fake.url, ... }) // fake.url is the origin
 *   fake.script({ reply: 'hi', failNext: { count: 2, status: 500 } });
 *   fake.requests[0].body.model; fake.requests[0].headers.authorization;
 *   await fake.waitForAborts(1); await fake.close();
 *
 * The full list of script fields is in fake-vendor.ts.
 */
import { argumentPieces, startFakeVendor, type FakeOptions, type FakeUsage, type FakeVendor, type ReplyContext, type VendorFormat } from './fake-vendor.js';

export type { FakeOptions, FakeScript, FakeToolCall, FakeUsage, FakeVendor, RecordedRequest } from './fake-vendor.js';

/** The finish reason: scripted, else `tool_calls` for an answer with tool calls, else `stop`. */
const finishOf = (ctx: ReplyContext) => ctx.finishReason ?? (ctx.toolCalls.length ? 'tool_calls' : 'stop');
const wireCall = (c: ReplyContext['toolCalls'][number]) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } });
/** A call's first streamed entry: index, id, type and name with empty arguments (as OpenAI sends it). */
const callHead = (c: ReplyContext['toolCalls'][number], index: number) => ({ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } });

const ERROR_TYPES: Record<number, [type: string, code: string | null]> = {
  400: ['invalid_request_error', null],
  401: ['invalid_request_error', 'invalid_api_key'],
  403: ['invalid_request_error', 'unsupported_country_region_territory'],
  404: ['invalid_request_error', 'model_not_found'],
  429: ['requests', 'rate_limit_exceeded'],
  503: ['server_error', 'overloaded'],
};

const created = () => Math.floor(Date.now() / 1000);
const wireUsage = (u: FakeUsage) => ({ prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.promptTokens + u.completionTokens });
/** A JSON answer's `usage`, left out for a server that counts nothing (script `omitUsage`). */
const usageField = (ctx: ReplyContext) => (ctx.omitUsage ? {} : { usage: wireUsage(ctx.usage) });

/** A legacy completions request (prompt, maybe suffix) rather than a chat one. */
const isText = (ctx: ReplyContext) => ctx.req?.prompt !== undefined;

function chunk(ctx: ReplyContext, choices: unknown[], extra: Record<string, unknown> = {}): string {
  const payload = isText(ctx)
    ? { id: `cmpl-fake${ctx.id}`, object: 'text_completion', created: created(), model: ctx.model, choices, ...extra }
    : { id: `chatcmpl-fake${ctx.id}`, object: 'chat.completion.chunk', created: created(), model: ctx.model, system_fingerprint: 'fp_fake', choices, ...extra };
  return `data: ${JSON.stringify(payload)}\n\n`;
}

export const openAIFormat: VendorFormat = {
  path: '/v1/chat/completions',
  otherPaths: ['/v1/completions'],
  apiKeyOf: (headers) => headers.authorization?.replace(/^Bearer\s+/i, ''),
  errorBody(status, message, scriptedCode, param) {
    const [type, code] = ERROR_TYPES[status] ?? (status >= 500 ? ['server_error', null] : ['invalid_request_error', null]);
    return { error: { message, type, param: param ?? null, code: scriptedCode ?? code } };
  },
  json(ctx, text) {
    if (isText(ctx)) {
      return { id: `cmpl-fake${ctx.id}`, object: 'text_completion', created: created(), model: ctx.model, choices: [{ index: 0, text, logprobs: null, finish_reason: ctx.finishReason ?? 'stop' }], ...usageField(ctx) };
    }
    return {
      id: `chatcmpl-fake${ctx.id}`,
      object: 'chat.completion',
      created: created(),
      model: ctx.model,
      choices: [{
        index: 0,
        message: ctx.toolCalls.length ? { role: 'assistant', content: text || null, tool_calls: ctx.toolCalls.map(wireCall), refusal: null, annotations: [] } : { role: 'assistant', content: text, refusal: null },
        logprobs: null, finish_reason: finishOf(ctx),
      }],
      ...usageField(ctx),
    };
  },
  // An answer that is only tool calls: OpenAI's first chunk has the role, content null and the first call's head.
  streamHead: (ctx) => (isText(ctx) ? [] : [chunk(ctx, [{
    index: 0, delta: ctx.toolCalls.length && !ctx.hasText ? { role: 'assistant', content: null, tool_calls: [callHead(ctx.toolCalls[0]!, 0)], refusal: null } : { role: 'assistant', content: '' }, logprobs: null, finish_reason: null,
  }])]),
  streamDelta: (ctx, text) => chunk(ctx, [isText(ctx) ? { index: 0, text, logprobs: null, finish_reason: null } : { index: 0, delta: { content: text }, logprobs: null, finish_reason: null }]),
  streamTail(ctx) {
    const frames: string[] = [];
    // Tool calls: each call's head (the first one's went with the role chunk when there was no text), then its argument pieces with only the index.
    ctx.toolCalls.forEach((c, index) => {
      if (index > 0 || ctx.hasText) frames.push(chunk(ctx, [{ index: 0, delta: { tool_calls: [callHead(c, index)] }, logprobs: null, finish_reason: null }]));
      for (const piece of argumentPieces(c.arguments)) frames.push(chunk(ctx, [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: piece } }] }, logprobs: null, finish_reason: null }]));
    });
    frames.push(chunk(ctx, [isText(ctx) ? { index: 0, text: '', logprobs: null, finish_reason: finishOf(ctx) } : { index: 0, delta: {}, logprobs: null, finish_reason: finishOf(ctx) }]));
    // Like OpenAI: usage only when asked for, in a final chunk whose choices are empty (never, for a server that counts nothing).
    if (ctx.req?.stream_options?.include_usage && !ctx.omitUsage) frames.push(chunk(ctx, [], { usage: wireUsage(ctx.usage) }));
    frames.push('data: [DONE]\n\n');
    return frames;
  },
  lengthReason: 'length',
  streamError: (_ctx, message) => `data: ${JSON.stringify({ error: { message, type: 'server_error', param: null, code: null } })}\n\n`,
};

export function startOpenAIFake(options?: FakeOptions): Promise<FakeVendor> {
  return startFakeVendor(openAIFormat, options);
}
