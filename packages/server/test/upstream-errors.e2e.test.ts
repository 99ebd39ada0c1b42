/**
 * Upstream errors keep their meaning across the gateway (CONTRACT §12.3, issue 24 item 4), seen through the
 * official `openai` SDK and the REST API: an upstream 400 (`context_length_exceeded`) is a 400 carrying the
 * upstream's code and param, never retried; an upstream 429 that outlasts Codeloom's retries is a 429 with
 * Retry-After; an upstream 500 costs 1 + CODELOOM_UPSTREAM_RETRIES upstream calls for one SDK call with its
 * default retries (the answer says `x-should-retry: false`), not their product.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { connect } from './helpers/ws-client.js';

describe('upstream errors through the gateway', () => {
  let fake: FakeVendor;
  let t: TestServer;
  let token: string;
  let client: OpenAI;
  beforeAll(async () => {
    fake = await startOpenAIFake();
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_UPSTREAM_RETRIES: '2' } });
    token = (await registerUser(t.url, { ip: nextIp() })).token;
    // The SDK's own defaults: 2 retries.
    client = new OpenAI({ apiKey: token, baseURL: `${t.url}/openai/v1` });
  });
  beforeEach(() => fake.reset());
  afterAll(async () => { await t?.close(); await fake?.close(); });

  const chat = (stream = false) => client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hello' }], max_tokens: 20, ...(stream ? { stream: true } : {}) } as never);

  it("an upstream 400 context_length_exceeded is a 400 with the upstream's code and param, tried once (JSON and SSE)", async () => {
    for (const stream of [false, true]) {
      fake.reset();
      fake.script({ failNext: { count: 5, status: 400, message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 tokens.", code: 'context_length_exceeded', param: 'messages' } });
      const error = await chat(stream).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      const e = error as InstanceType<typeof OpenAI.BadRequestError>;
      expect(e.status).toBe(400);
      expect(e.code).toBe('context_length_exceeded');
      expect(e.param).toBe('messages');
      expect(e.message).toContain('maximum context length is 8192');
      expect(fake.requests).toHaveLength(1);
    }
  });

  it('the REST API and the channel say upstream_rejected with upstream_code', async () => {
    fake.script({ failNext: { count: 5, status: 400, message: 'too long', code: 'context_length_exceeded' } });
    const res = await request(`${t.url}/api/v1/generate`, { token, body: { prompt: 'a todo API', model: 'gpt-test', max_tokens: 20 } });
    expect(res.status, res.text).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body).toMatchObject({ code: 'upstream_rejected', upstream_code: 'context_length_exceeded', type: '/docs/errors#upstream_rejected' });
    const ws = await connect(t.url, token);
    ws.send({ type: 'generate', id: 'g1', prompt: 'a todo API', model: 'gpt-test', max_tokens: 20 });
    const { end } = await ws.result('g1');
    expect(end.event).toBe('error');
    expect(end.data).toMatchObject({ status: 400, code: 'upstream_rejected', upstream_code: 'context_length_exceeded' });
    ws.ws.close();
  });

  it('an upstream 429 that outlasts the retries is a 429 with Retry-After (RateLimitError)', async () => {
    fake.script({ failNext: { count: 100, status: 429, retryAfter: 0 } });
    const res = await fetch(`${t.url}/openai/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 }) });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    const body = await res.json();
    expect(body.error).toMatchObject({ type: 'rate_limit_error', code: 'upstream_rate_limited' });
    expect(fake.requests).toHaveLength(3);
    const problem = await request(`${t.url}/api/v1/generate`, { token, body: { prompt: 'x', model: 'gpt-test', max_tokens: 20 } });
    expect(problem.status).toBe(429);
    expect(problem.body.code).toBe('upstream_rate_limited');
    expect(problem.headers.get('retry-after')).toBe('1');
  });

  it('an upstream 500 costs three upstream calls for one SDK call with its default retries, not nine', async () => {
    fake.script({ failNext: { count: 100, status: 500 } });
    const error = await chat().then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((error as InstanceType<typeof OpenAI.APIError>).headers?.get?.('x-should-retry') ?? (error as any).headers?.['x-should-retry']).toBe('false');
    expect(fake.requests).toHaveLength(3);
  });
});
