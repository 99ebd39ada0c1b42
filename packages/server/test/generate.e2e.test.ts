import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { readSse } from './helpers/sse.js';
import { awayFromWindowEnd } from './helpers/limit-windows.js';

const REPLY = 'Here you go.\n\n```typescript src/todos.ts\nexport const todos: string[] = [];\n```\n\n```typescript test/todos.test.ts\nimport { todos } from "../src/todos";\n```\n';

describe('POST /api/v1/generate through the OpenAI-compatible provider', () => {
  let fake: FakeVendor;
  let t: TestServer;
  let token: string;

  beforeAll(async () => {
    fake = await startOpenAIFake({ record: true });
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test-secret', CODELOOM_OPENAI_MODELS: 'gpt-test,gpt-other', CODELOOM_UPSTREAM_TIMEOUT: '1', CODELOOM_UPSTREAM_RETRIES: '2' } });
  });
  afterAll(async () => { await t.close(); await fake.close(); });
  beforeEach(async () => {
    fake.reset();
    fake.script({ reply: REPLY });
    token = (await registerUser(t.url, { ip: nextIp() })).token;
  });

  const generate = (body: unknown, tok = token) => request(`${t.url}/api/v1/generate`, { token: tok, body });

  it('returns the §7 result: code, files, output, usage, timing', async () => {
    const res = await generate({ prompt: 'REST API for todos', model: 'gpt-test', language: 'typescript', context: { framework: 'fastify', includeTests: true } });
    expect(res.status).toBe(200);
    const r = res.body;
    expect(r.id).toMatch(/^gen_/);
    expect(r.model).toBe('gpt-test');
    expect(r.language).toBe('typescript');
    expect(r.output).toBe(REPLY);
    expect(r.files).toEqual([
      { path: 'src/todos.ts', content: 'export const todos: string[] = [];\n' },
      { path: 'test/todos.test.ts', content: 'import { todos } from "../src/todos";\n' },
    ]);
    expect(r.code).toBe('export const todos: string[] = [];\n');
    expect(r.tokens_used).toBe(r.usage.prompt_tokens + r.usage.completion_tokens);
    expect(r.usage.completion_tokens).toBeGreaterThan(0);
    expect(typeof r.processing_time).toBe('number');
    expect(r.processing_time).toBeLessThan(5);
    // What Codeloom sent upstream.
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-test-secret');
    expect(sent.body.model).toBe('gpt-test');
    expect(sent.body.stream).toBe(true);
    expect(sent.body.messages.at(-1)).toEqual({ role: 'user', content: 'REST API for todos' });
    expect(sent.body.messages[0].content).toContain('framework: fastify');
  });

  it('stores the generation in history, newest first, and hides it from other accounts', async () => {
    const a = await generate({ prompt: 'first', model: 'gpt-test' });
    const b = await generate({ prompt: 'second', model: 'gpt-test' });
    const list = await request(`${t.url}/api/v1/generations?limit=1`, { token });
    expect(list.status).toBe(200);
    expect(list.body.pagination).toEqual({ page: 1, limit: 1, total: 2, total_pages: 2 });
    expect(list.body.data[0].id).toBe(b.body.id);
    const one = await request(`${t.url}/api/v1/generations/${a.body.id}`, { token });
    expect(one.body).toMatchObject({ id: a.body.id, output: REPLY, prompt: 'first' });
    const stranger = await registerUser(t.url, { ip: nextIp() });
    const other = await request(`${t.url}/api/v1/generations/${a.body.id}`, { token: stranger.token });
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('not_found');
  });

  it('refuses bad input with 400 problems that name the valid values', async () => {
    const cases: Array<[unknown, string]> = [
      [{ prompt: '' }, '/prompt'],
      [{ prompt: 'x'.repeat(32_001) }, '/prompt'],
      [{ prompt: 42 }, '/prompt'],
      [{}, '/prompt'],
      [{ prompt: 'ok', context: { framework: { nested: true } } }, '/context/framework'],
      [{ prompt: 'ok', context: { extra: { nested: true } } }, '/context/extra'],
      [{ prompt: 'ok', max_tokens: 0 }, '/max_tokens'],
    ];
    for (const [body, path] of cases) {
      const res = await generate(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    const model = await generate({ prompt: 'ok', model: 'nope' });
    expect(model.status).toBe(400);
    expect(model.body.detail).toContain('sandbox');
    expect(model.body.detail).toContain('gpt-test');
    const language = await generate({ prompt: 'ok', language: 'klingon' });
    expect(language.status).toBe(400);
    expect(language.body.detail).toContain('typescript');
  });

  it('accepts exactly 32,000 characters; through an upstream on the free plan, that call can never fit its minute (400 request_too_large)', async () => {
    const prompt = 'y'.repeat(32_000);
    // The sandbox model counts its prompt exactly.
    expect((await generate({ prompt, model: 'sandbox' })).status).toBe(200);
    // An upstream counts it only afterwards: Codeloom holds its bound (its bytes), and 32,000 and the output cap are more than the free plan's 20,000 a minute.
    const refused = await generate({ prompt, model: 'gpt-test' });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.code).toBe('request_too_large');
    // On a plan whose minute holds it, it goes through.
    const pro = await registerUser(t.url, { ip: nextIp() });
    await t.server.ctx.store.accounts.setPlanByEmail(pro.email.toLowerCase(), 'pro');
    const res = await generate({ prompt, model: 'gpt-test' }, pro.token);
    expect(res.status, res.text).toBe(200);
  });

  it('retries transient upstream failures, then answers 502 upstream_error without leaking the key', async () => {
    fake.script({ failNext: { count: 2, status: 500 } });
    const ok = await generate({ prompt: 'retry me', model: 'gpt-test' });
    expect(ok.status).toBe(200);
    fake.script({ failNext: { count: 3, status: 500, message: 'boom sk-test-secret' } });
    const failed = await generate({ prompt: 'fail me', model: 'gpt-test' });
    expect(failed.status).toBe(502);
    expect(failed.body.code).toBe('upstream_error');
    expect(failed.text).not.toContain('sk-test-secret');
  });

  it('answers 504 upstream_timeout when the provider hangs past the timeout', async () => {
    fake.script({ hang: true });
    const res = await generate({ prompt: 'hang', model: 'gpt-test' });
    expect(res.status).toBe(504);
    expect(res.body.code).toBe('upstream_timeout');
  });

  it('streams SSE: token events that add up to the output, then complete', async () => {
    const res = await fetch(`${t.url}/api/v1/generate`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'todos', model: 'gpt-test', stream: true }) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
    const frames = await readSse(res);
    const tokens = frames.filter((f) => f.event === 'token');
    expect(tokens.length).toBeGreaterThan(1);
    const last = frames.at(-1)!;
    expect(last.event).toBe('complete');
    expect(tokens.map((f) => f.frame.data).join('')).toBe(last.frame.data.output);
    expect(last.frame.data.output).toBe(REPLY);
  });

  it('ends a stream cut mid-way with an error event, never a complete', async () => {
    fake.script({ cutAfterChunks: 3 });
    const res = await fetch(`${t.url}/api/v1/generate`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'todos', model: 'gpt-test', stream: true }) });
    const frames = await readSse(res);
    expect(frames.filter((f) => f.event === 'token')).toHaveLength(3);
    expect(frames.some((f) => f.event === 'complete')).toBe(false);
    expect(frames.at(-1)).toMatchObject({ event: 'error', frame: { data: { status: 502, code: 'upstream_error' } } });
  });

  it('aborts the upstream call when the client disconnects mid-stream, and still charges the tokens used', async () => {
    fake.script({ chunkDelayMs: 50, reply: 'word '.repeat(200) });
    const controller = new AbortController();
    const res = await fetch(`${t.url}/api/v1/generate`, { method: 'POST', signal: controller.signal, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'long', model: 'gpt-test', stream: true }) });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await fake.waitForAborts(1, 3_000);
    expect(fake.aborts).toBe(1);
  });

  it('aborts the upstream call when a client waiting for a JSON answer disconnects, and the next request on a new connection is answered', async () => {
    fake.script({ chunkDelayMs: 50, reply: 'word '.repeat(200) });
    const controller = new AbortController();
    const pending = fetch(`${t.url}/api/v1/generate`, { method: 'POST', signal: controller.signal, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'long', model: 'gpt-test' }) });
    const before = fake.requests.length;
    for (let i = 0; i < 100 && fake.requests.length === before; i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 100)); // a few chunks in: the answer is being streamed from upstream
    controller.abort();
    await expect(pending).rejects.toThrow();
    await fake.waitForAborts(1, 3_000);
    expect(fake.aborts).toBe(1);
    fake.script({ chunkDelayMs: 0, reply: 'done' });
    expect((await generate({ prompt: 'after', model: 'gpt-test' })).status).toBe(200);
  });

  it('refuses with 429 once the tokens-per-minute budget is spent', async () => {
    await awayFromWindowEnd();
    fake.script({ usage: { promptTokens: 10, completionTokens: 19_995 } });
    const first = await generate({ prompt: 'big', model: 'gpt-test' });
    expect(first.status).toBe(200);
    const second = await generate({ prompt: 'more', model: 'gpt-test' });
    expect(second.status).toBe(429);
    expect(second.body.code).toBe('rate_limited');
    expect(second.body.detail).toContain('Tokens-per-minute limit of 20000');
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('needs write:code: a read-only key is refused with 403', async () => {
    const key = await request(`${t.url}/api/v1/api-keys`, { token, body: { name: 'ro', scopes: ['read:code'] } });
    const res = await generate({ prompt: 'x', model: 'gpt-test' }, key.body.key);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('insufficient_scope');
    expect(res.body.detail).toContain('write:code');
  });

  it('lists models (with the default) and languages', async () => {
    const models = await request(`${t.url}/api/v1/models`, { token });
    expect(models.body.data.map((m: { id: string }) => m.id)).toEqual(expect.arrayContaining(['sandbox', 'gpt-test', 'gpt-other']));
    expect(models.body.default).toBe('gpt-test');
    const languages = await request(`${t.url}/api/v1/languages`, { token });
    expect(languages.body.data.map((l: { id: string }) => l.id)).toEqual(expect.arrayContaining(['typescript', 'python', 'rust']));
  });
});
