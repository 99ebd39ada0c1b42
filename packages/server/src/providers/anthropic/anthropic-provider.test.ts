import { CancelledError } from '../../errors.js';
import { describe, expect, it } from 'vitest';
import { startAnthropicFake, type FakeVendor } from '../../../test/fakes/anthropic-fake.js';
import type { StreamPart } from '../provider.js';
import { collect, failure, setupProviderTests } from '../provider-test-setup.js';
import { anthropicEndpoint, createAnthropicProvider, type AnthropicProviderOptions } from './anthropic-provider.js';

const KEY = 'sk-ant-api03-test0123456789';
const messages = [
  { role: 'system' as const, content: 'You write code.' },
  { role: 'user' as const, content: 'REST API for todos' },
  { role: 'assistant' as const, content: 'Which framework?' },
  { role: 'user' as const, content: 'fastify' },
];

let fake: FakeVendor;
const provider = setupProviderTests<AnthropicProviderOptions>({ start: async () => (fake = await startAnthropicFake()), create: createAnthropicProvider, apiKey: KEY });

describe('Anthropic provider', () => {
  it('a stopped-at-max_tokens answer is length; a message without usage reports none (absent, never 0)', async () => {
    fake.script({ reply: 'one two three four', honourMaxTokens: true });
    const cut = await collect(provider().stream({ model: 'claude', messages, maxTokens: 2 }));
    expect(cut.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('')).toBe('one two ');
    expect(cut.at(-1)).toMatchObject({ type: 'finish', finishReason: 'length', usage: { completionTokens: 2 } });
    fake.script({ honourMaxTokens: false, omitUsage: true });
    expect((await collect(provider().stream({ model: 'claude', messages }))).at(-1)).toEqual({ type: 'finish', usage: {}, finishReason: 'stop' });
    expect((await provider().generate({ model: 'claude', messages })).usage).toEqual({});
  });

  it('generate sends a Messages API request: system on top, max_tokens defaulted', async () => {
    fake.script({ reply: 'import Fastify from "fastify";', usage: { promptTokens: 30, completionTokens: 8 } });
    const out = await provider().generate({ model: 'claude-sonnet-4-5', messages, temperature: 0.3 });
    expect(out).toEqual({ text: 'import Fastify from "fastify";', usage: { promptTokens: 30, completionTokens: 8 }, finishReason: 'stop' });
    const [req] = fake.requests;
    expect(req).toMatchObject({ method: 'POST', path: '/v1/messages' });
    expect(req!.headers['x-api-key']).toBe(KEY);
    expect(req!.headers['anthropic-version']).toBe('2023-06-01');
    expect(req!.headers.authorization).toBeUndefined();
    expect(req!.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: 'You write code.',
      messages: messages.slice(1),
      temperature: 0.3,
    });
  });

  it('passes max_tokens through and maps max_tokens stops to length', async () => {
    fake.script({ finishReason: 'max_tokens' });
    const out = await provider().generate({ model: 'm', messages: messages.slice(1, 2), maxTokens: 100 });
    expect(out.finishReason).toBe('length');
    expect(fake.requests[0]!.body).toMatchObject({ max_tokens: 100 });
    expect(fake.requests[0]!.body).not.toHaveProperty('system');
  });

  it('accepts base URLs with or without /v1', () => {
    expect(anthropicEndpoint('https://api.anthropic.com')).toBe('https://api.anthropic.com/v1/messages');
    expect(anthropicEndpoint('https://api.anthropic.com/v1/')).toBe('https://api.anthropic.com/v1/messages');
    expect(anthropicEndpoint('https://proxy.example/anthropic')).toBe('https://proxy.example/anthropic/v1/messages');
  });

  it('streams text deltas (ignoring pings) with usage from message_start and message_delta', async () => {
    fake.script({ reply: 'const app = Fastify();\napp.listen({ port: 3000 });\n', usage: { promptTokens: 21, completionTokens: 14 } });
    const parts = await collect(provider().stream({ model: 'm', messages, maxTokens: 512 }));
    const texts = parts.filter((p) => p.type === 'text');
    expect(texts.length).toBeGreaterThan(3);
    expect(texts.map((p) => p.text).join('')).toBe('const app = Fastify();\napp.listen({ port: 3000 });\n');
    expect(parts.at(-1)).toEqual({ type: 'finish', usage: { promptTokens: 21, completionTokens: 14 }, finishReason: 'stop' });
    expect(fake.requests[0]!.body).toMatchObject({ stream: true, max_tokens: 512 });
  });

  it('retries 529 overloaded and a reset, then succeeds', async () => {
    fake.script({ failNext: { count: 1, status: 529 }, resetNext: 1 });
    const out = await provider().generate({ model: 'm', messages });
    expect(out.text).toBe('Hello from the fake vendor.');
    expect(fake.requests).toHaveLength(3);
  });

  it('honours a short Retry-After on 429', async () => {
    fake.script({ failNext: { count: 1, status: 429, retryAfter: 0 } });
    const parts = await collect(provider().stream({ model: 'm', messages }));
    expect(parts.at(-1)?.type).toBe('finish');
    expect(fake.requests).toHaveLength(2);
  });

  it('gives up after maxRetries: 529 → service_unavailable, 500 → upstream_error', async () => {
    fake.script({ failNext: { count: 10, status: 529, message: 'Overloaded' } });
    const overloaded = await failure(provider({ maxRetries: 3 }).generate({ model: 'm', messages }));
    expect(overloaded).toMatchObject({ kind: 'service_unavailable', upstreamStatus: 529 });
    expect(overloaded.detail).toMatch(/HTTP 529\): Overloaded \(gave up after 4 attempts\)/);
    expect(fake.requests).toHaveLength(4);

    fake.reset();
    fake.script({ failNext: { count: 10, status: 500 } });
    const failed = await failure(collect(provider({ maxRetries: 0 }).stream({ model: 'm', messages })));
    expect(failed).toMatchObject({ kind: 'upstream_error', upstreamStatus: 500 });
    expect(fake.requests).toHaveLength(1);
  });

  it('maps 401 to a credentials error without echoing the key', async () => {
    fake.script({ requireApiKey: 'sk-ant-other-key-999999' });
    const err = await failure(provider().generate({ model: 'm', messages }));
    expect(err).toMatchObject({ kind: 'upstream_error', retryable: false, upstreamStatus: 401 });
    expect(err.detail).toBe("the provider rejected Codeloom's credentials (HTTP 401)");
    expect(err.detail).not.toContain(KEY);
    expect(fake.requests).toHaveLength(1);
  });

  it('400 carries the upstream message', async () => {
    fake.script({ failNext: { count: 1, status: 400, message: 'messages: roles must alternate' } });
    const err = await failure(provider().generate({ model: 'm', messages }));
    expect(err.detail).toBe('the provider refused the request (HTTP 400): messages: roles must alternate');
    // Anthropic's errors have a type, no code: the type is passed on.
    expect(err).toMatchObject({ kind: 'upstream_rejected', status: 400, upstream: { code: 'invalid_request_error' } });
    expect(fake.requests).toHaveLength(1);
  });

  it('a hung upstream → upstream_timeout, the socket is closed', async () => {
    fake.script({ hang: true });
    const err = await failure(collect(provider({ timeoutMs: 150 }).stream({ model: 'm', messages })));
    expect(err.kind).toBe('upstream_timeout');
    expect(fake.requests).toHaveLength(1);
    await fake.waitForAborts(1);
  });

  it('a cut stream throws after the tokens that arrived', async () => {
    fake.script({ reply: 'alpha beta gamma delta', cutAfterChunks: 2 });
    const seen: StreamPart[] = [];
    const err = await failure(collect(provider().stream({ model: 'm', messages }), seen));
    expect(seen).toEqual([{ type: 'text', text: 'alpha ' }, { type: 'text', text: 'beta ' }]);
    expect(err.detail).toBe("the provider's stream was cut after 2 tokens");
    expect(fake.requests).toHaveLength(1);
  });

  it('an in-band overloaded_error before any text is retried like a 529', async () => {
    fake.script({ errorAfterChunks: 0 });
    const err = await failure(collect(provider({ maxRetries: 1 }).stream({ model: 'm', messages })));
    expect(err).toMatchObject({ kind: 'service_unavailable' });
    expect(fake.requests).toHaveLength(2);
  });

  it('an in-band error after text fails the stream without a finish', async () => {
    fake.script({ reply: 'a b c d', errorAfterChunks: 3 });
    const seen: StreamPart[] = [];
    const err = await failure(collect(provider().stream({ model: 'm', messages }), seen));
    expect(seen).toHaveLength(3);
    expect(seen.some((p) => p.type === 'finish')).toBe(false);
    expect(err).toMatchObject({ kind: 'service_unavailable', retryable: false });
    expect(fake.requests).toHaveLength(1);
  });

  it('aborting mid-stream closes the upstream socket promptly', async () => {
    fake.script({ reply: 'a b c d e f g h', chunkDelayMs: 100 });
    const controller = new AbortController();
    const seen: StreamPart[] = [];
    const done = failure(collect(provider().stream({ model: 'm', messages, signal: controller.signal }), seen), CancelledError);
    while (seen.length < 1) await new Promise((r) => setTimeout(r, 5));
    const abortedAt = Date.now();
    controller.abort();
    await fake.waitForAborts(1, 500);
    expect(Date.now() - abortedAt).toBeLessThan(100);
    expect(await done).toBeInstanceOf(CancelledError);
  });

  it('an already-aborted signal sends nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    const err = await failure(provider().generate({ model: 'm', messages, signal: controller.signal }), CancelledError);
    expect(err).toBeInstanceOf(CancelledError);
    expect(fake.requests).toHaveLength(0);
  });
});
