import { CancelledError } from '../../errors.js';
import { describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { startOpenAIFake, type FakeVendor } from '../../../test/fakes/openai-fake.js';
import type { StreamPart } from '../provider.js';
import { collect, failure, setupProviderTests } from '../provider-test-setup.js';
import { createOpenAIProvider, openAIEndpoint, type OpenAIProviderOptions } from './openai-provider.js';

const KEY = 'sk-test-0123456789abcdef';
const messages = [
  { role: 'system' as const, content: 'You write code.' },
  { role: 'user' as const, content: 'REST API for todos' },
];

let fake: FakeVendor;
const provider = setupProviderTests<OpenAIProviderOptions>({ start: async () => (fake = await startOpenAIFake()), create: createOpenAIProvider, apiKey: KEY });

describe('OpenAI-compatible provider', () => {
  it('generate sends the chat-completions request and maps the answer', async () => {
    fake.script({ reply: 'export const x = 1;', usage: { promptTokens: 12, completionTokens: 7 } });
    const out = await provider().generate({ model: 'gpt-4o-mini', messages, maxTokens: 256, temperature: 0.2 });
    expect(out).toEqual({ text: 'export const x = 1;', usage: { promptTokens: 12, completionTokens: 7 }, finishReason: 'stop' });
    const [req] = fake.requests;
    expect(req).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
    expect(req!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.body).toEqual({ model: 'gpt-4o-mini', messages, max_tokens: 256, temperature: 0.2 });
  });

  it('maps finish reasons and omits the Authorization header without a key', async () => {
    fake.script({ finishReason: 'length' });
    const out = await provider({ apiKey: '' }).generate({ model: 'llama3', messages });
    expect(out.finishReason).toBe('length');
    expect(fake.requests[0]!.headers.authorization).toBeUndefined();
    expect(fake.requests[0]!.body).not.toHaveProperty('max_tokens');
  });

  it('accepts base URLs with or without the version path', () => {
    expect(openAIEndpoint('http://localhost:11434')).toBe('http://localhost:11434/v1/chat/completions');
    expect(openAIEndpoint('http://localhost:11434/v1/')).toBe('http://localhost:11434/v1/chat/completions');
    expect(openAIEndpoint('https://api.groq.com/openai/v1')).toBe('https://api.groq.com/openai/v1/chat/completions');
  });

  it('streams the text with real usage, asking for include_usage', async () => {
    fake.script({ reply: 'function add(a, b) {\n  return a + b;\n}\n', usage: { promptTokens: 9, completionTokens: 11 } });
    const parts = await collect(provider().stream({ model: 'gpt-4o-mini', messages, maxTokens: 64 }));
    const texts = parts.filter((p) => p.type === 'text');
    expect(texts.length).toBeGreaterThan(3);
    expect(texts.map((p) => p.text).join('')).toBe('function add(a, b) {\n  return a + b;\n}\n');
    expect(parts.at(-1)).toEqual({ type: 'finish', usage: { promptTokens: 9, completionTokens: 11 }, finishReason: 'stop' });
    expect(fake.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true }, max_tokens: 64 });
  });

  it('a server that sends no usage reports none: the counts are absent, never 0 (streamed and JSON)', async () => {
    fake.script({ reply: 'a b c', omitUsage: true });
    const parts = await collect(provider().stream({ model: 'm', messages, maxTokens: 64 }));
    expect(parts.at(-1)).toEqual({ type: 'finish', usage: {}, finishReason: 'stop' });
    const out = await provider().generate({ model: 'm', messages });
    expect(out).toEqual({ text: 'a b c', usage: {}, finishReason: 'stop' });
  });

  it.each([500, 429, 502])('retries HTTP %i and then succeeds', async (status) => {
    fake.script({ failNext: { count: 2, status, retryAfter: status === 429 ? 0 : undefined } });
    const out = await provider().generate({ model: 'm', messages });
    expect(out.text).toBe('Hello from the fake vendor.');
    expect(fake.requests).toHaveLength(3);
  });

  it('retries a connection reset, before the stream produced anything', async () => {
    fake.script({ resetNext: 1 });
    const parts = await collect(provider().stream({ model: 'm', messages }));
    expect(parts.at(-1)?.type).toBe('finish');
    expect(fake.requests).toHaveLength(2);
  });

  it('gives up after maxRetries: 5xx → upstream_error, 503 → service_unavailable', async () => {
    fake.script({ failNext: { count: 10, status: 500, message: 'boom' } });
    const err = await failure(provider({ maxRetries: 2 }).generate({ model: 'm', messages }));
    expect(err).toMatchObject({ kind: 'upstream_error', upstreamStatus: 500 });
    expect(err.detail).toMatch(/HTTP 500.*boom.*gave up after 3 attempts/);
    expect(fake.requests).toHaveLength(3);

    fake.reset();
    fake.script({ failNext: { count: 10, status: 503 } });
    const unavailable = await failure(collect(provider({ maxRetries: 1 }).stream({ model: 'm', messages })));
    expect(unavailable.kind).toBe('service_unavailable');
    expect(fake.requests).toHaveLength(2);
  });

  it('fails fast when Retry-After asks for longer than we may wait', async () => {
    fake.script({ failNext: { count: 5, status: 429, retryAfter: 30 } });
    const err = await failure(provider().generate({ model: 'm', messages }));
    expect(err.detail).toMatch(/HTTP 429.*retry after 30 s/);
    expect(fake.requests).toHaveLength(1);
  });

  it('maps 401 to a credentials error without echoing the key, and does not retry', async () => {
    fake.script({ requireApiKey: 'sk-the-right-one-123456' });
    const err = await failure(provider().generate({ model: 'm', messages }));
    expect(err).toMatchObject({ kind: 'upstream_error', retryable: false, upstreamStatus: 401 });
    expect(err.detail).toBe("the provider rejected Codeloom's credentials (HTTP 401)");
    expect(fake.requests).toHaveLength(1);
  });

  it('passes the upstream message of a 400 on, with secrets redacted', async () => {
    fake.script({ failNext: { count: 1, status: 400, message: `max_tokens is too large (key ${KEY})` } });
    const err = await failure(provider().generate({ model: 'm', messages }));
    // The caller's request was refused: a 400 of its own, never retried, with the vendor's code (here only its type).
    expect(err).toMatchObject({ kind: 'upstream_rejected', status: 400, retryable: false, upstreamStatus: 400, upstream: { code: 'invalid_request_error' } });
    expect(err.detail).toBe('the provider refused the request (HTTP 400): max_tokens is too large (key [redacted])');
    expect(fake.requests).toHaveLength(1);
  });

  it("passes OpenAI's own code and param on (context_length_exceeded), streaming or not", async () => {
    for (const call of [() => provider().generate({ model: 'm', messages }), () => collect(provider().stream({ model: 'm', messages }))]) {
      fake.reset();
      fake.script({ failNext: { count: 1, status: 400, message: "This model's maximum context length is 8192 tokens.", code: 'context_length_exceeded', param: 'messages' } });
      const err = await failure(call());
      expect(err).toMatchObject({ kind: 'upstream_rejected', status: 400, upstream: { code: 'context_length_exceeded', param: 'messages' } });
      expect(err.extra.upstreamCode).toBe('context_length_exceeded');
      expect(fake.requests).toHaveLength(1);
    }
  });

  it('a 429 that outlasts the retries is upstream_rate_limited with Retry-After; a 500 after retries says x-should-retry: false', async () => {
    fake.script({ failNext: { count: 3, status: 429, retryAfter: 0 } });
    const limited = await failure(provider({ maxRetries: 2 }).generate({ model: 'm', messages }));
    expect(limited).toMatchObject({ kind: 'upstream_rate_limited', status: 429 });
    expect(limited.extra.headers).toMatchObject({ 'retry-after': '1' });
    expect(limited.extra.headers?.['x-should-retry']).toBeUndefined();
    expect(fake.requests).toHaveLength(3);
    fake.reset();
    fake.script({ failNext: { count: 3, status: 500 } });
    const failed = await failure(provider({ maxRetries: 2, retryBaseDelayMs: 1 }).generate({ model: 'm', messages }));
    expect(failed).toMatchObject({ kind: 'upstream_error', status: 502 });
    expect(failed.extra.headers).toMatchObject({ 'x-should-retry': 'false' });
    expect(fake.requests).toHaveLength(3);
  });

  it('times out a hung upstream with upstream_timeout and closes the socket', async () => {
    fake.script({ hang: true });
    const started = Date.now();
    const err = await failure(provider({ timeoutMs: 150 }).generate({ model: 'm', messages }));
    expect(err.kind).toBe('upstream_timeout');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(fake.requests).toHaveLength(1);
    await fake.waitForAborts(1);
  });

  it('times out a stream that stalls between chunks, after the tokens that arrived', async () => {
    fake.script({ reply: 'one two three four', hangAfterChunks: 2 });
    const seen: StreamPart[] = [];
    const err = await failure(collect(provider({ timeoutMs: 150 }).stream({ model: 'm', messages }), seen));
    expect(seen.map((p) => (p.type === 'text' ? p.text : p.type))).toEqual(['one ', 'two ']);
    expect(err.kind).toBe('upstream_timeout');
    expect(err.detail).toMatch(/stalled .* after 2 tokens/);
  });

  it('a slow consumer is not mistaken for a stalled upstream', async () => {
    fake.script({ reply: 'a b c' });
    const parts: StreamPart[] = [];
    for await (const part of provider({ timeoutMs: 100 }).stream({ model: 'm', messages })) {
      parts.push(part);
      await new Promise((r) => setTimeout(r, 150));
    }
    expect(parts.at(-1)?.type).toBe('finish');
  });

  it('throws after the delivered tokens when the stream is cut, and does not retry', async () => {
    fake.script({ reply: 'one two three four five', cutAfterChunks: 3 });
    const seen: StreamPart[] = [];
    const err = await failure(collect(provider().stream({ model: 'm', messages }), seen));
    expect(seen).toEqual([{ type: 'text', text: 'one ' }, { type: 'text', text: 'two ' }, { type: 'text', text: 'three ' }]);
    expect(err).toMatchObject({ kind: 'upstream_error', retryable: false });
    expect(err.detail).toBe("the provider's stream was cut after 3 tokens");
    expect(fake.requests).toHaveLength(1);
  });

  it('retries a stream cut before any output, then gives up', async () => {
    fake.script({ cutAfterChunks: 0 });
    const err = await failure(collect(provider({ maxRetries: 2 }).stream({ model: 'm', messages })));
    expect(err.detail).toMatch(/cut before any output \(gave up after 3 attempts\)/);
    expect(fake.requests).toHaveLength(3);
  });

  it('reports an in-band error after tokens as a failure, never as a finish', async () => {
    fake.script({ reply: 'a b c d', errorAfterChunks: 2 });
    const seen: StreamPart[] = [];
    const err = await failure(collect(provider().stream({ model: 'm', messages }), seen));
    expect(seen.every((p) => p.type === 'text')).toBe(true);
    expect(err).toMatchObject({ kind: 'upstream_error', retryable: false });
    expect(err.detail).toMatch(/mid-stream: scripted in-band failure \(after 2 tokens\)/);
  });

  it('aborting mid-stream closes the upstream socket at once', async () => {
    fake.script({ reply: 'a b c d e f g h', chunkDelayMs: 100 });
    const controller = new AbortController();
    const seen: StreamPart[] = [];
    const done = failure(collect(provider().stream({ model: 'm', messages, signal: controller.signal }), seen), CancelledError);
    while (seen.length < 2) await new Promise((r) => setTimeout(r, 5));
    const abortedAt = Date.now();
    controller.abort();
    await fake.waitForAborts(1, 500);
    expect(Date.now() - abortedAt).toBeLessThan(100);
    expect(await done).toBeInstanceOf(CancelledError);
  });

  it('a consumer that stops iterating releases the upstream request', async () => {
    fake.script({ reply: 'a b c d e f g h', chunkDelayMs: 50 });
    for await (const part of provider().stream({ model: 'm', messages })) {
      if (part.type === 'text') break;
    }
    await fake.waitForAborts(1, 500);
  });

  it('aborting a hung generate cancels it and the fake sees the disconnect', async () => {
    fake.script({ hang: true });
    const controller = new AbortController();
    const pending = failure(provider().generate({ model: 'm', messages, signal: controller.signal }), CancelledError);
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    expect(await pending).toBeInstanceOf(CancelledError);
    await fake.waitForAborts(1, 500);
  });

  it('connection refused is retried, then reported as service_unavailable', async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const attempts: number[] = [];
    const p = createOpenAIProvider({ baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY, timeoutMs: 1_000, maxRetries: 2, retryBaseDelayMs: 1, fetch: (input, init) => (attempts.push(1), fetch(input, init)) });
    const err = await failure(p.generate({ model: 'm', messages }));
    expect(err).toMatchObject({ kind: 'service_unavailable', retryable: true });
    expect(attempts).toHaveLength(3);
  });
});
