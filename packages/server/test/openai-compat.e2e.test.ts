/**
 * The OpenAI-compatible surface (/openai/v1, docs/openai.md), driven by the official `openai` npm
 * client as editors and tools use it: chat (JSON and streamed with usage), completions with suffix
 * (fill-in-the-middle), models, and its error classes for 400/401/403/404/429 — against the sandbox model
 * and the OpenAI fake upstream (with a fallback to the sandbox when it fails before the first token).
 */
import { request as httpRequest } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { awayFromWindowEnd } from './helpers/limit-windows.js';

let fake: FakeVendor;
let t: TestServer;
let session: string;
let key: string;

const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });

async function makeKey(body: Record<string, unknown> = {}) {
  const res = await request(`${t.url}/api/v1/api-keys`, { token: session, body: { name: 'editor', ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.key as string;
}

beforeAll(async () => {
  fake = await startOpenAIFake({ script: { reply: 'Hello from the fake vendor.' } });
  t = await startTestServer({ env: {
    OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-test,gpt-flaky,gpt-fim', CODELOOM_OPENAI_FIM_MODELS: 'gpt-fim',
    CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_MODEL_FALLBACKS: 'gpt-flaky=sandbox', CODELOOM_UPSTREAM_RETRIES: '0',
  } });
  ({ token: session } = await registerUser(t.url, { ip: nextIp() }));
  key = await makeKey();
});
afterAll(async () => { await t?.close(); await fake?.close(); });

describe('chat completions', () => {
  it('answers a chat.completion from the sandbox model, deterministic, with usage and Server-Timing, recorded in history', async () => {
    const messages = [{ role: 'system' as const, content: 'You write code.' }, { role: 'user' as const, content: [{ type: 'text' as const, text: 'Write a REST API for todos in Python' }] }];
    const { data, response } = await client(key).chat.completions.create({ model: 'sandbox', messages, max_tokens: 300 }).withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.model).toBe('sandbox');
    expect(data.choices[0]!.message.role).toBe('assistant');
    expect(data.choices[0]!.message.content!.length).toBeGreaterThan(20);
    expect(data.usage!.completion_tokens).toBeGreaterThan(0);
    expect(data.usage!.total_tokens).toBe(data.usage!.prompt_tokens + data.usage!.completion_tokens);
    expect(response.headers.get('server-timing')).toMatch(/^upstream;dur=[\d.]+, gateway;dur=[\d.]+$/);
    const again = await client(key).chat.completions.create({ model: 'sandbox', messages, max_tokens: 300 });
    expect(again.choices[0]!.message.content).toBe(data.choices[0]!.message.content);
    const history = await request(`${t.url}/api/v1/generations/${data.id}`, { token: session });
    expect(history.status).toBe(200);
    expect(history.body).toMatchObject({ model: 'sandbox', output: data.choices[0]!.message.content, tokens_used: data.usage!.total_tokens });
  });

  it('streams chat.completion.chunk deltas that add up to the same text, then finish_reason, the usage chunk and [DONE]', async () => {
    const body = { model: 'sandbox', messages: [{ role: 'user' as const, content: 'CLI tool in Go that counts words' }], max_tokens: 200 };
    const whole = await client(key).chat.completions.create(body);
    const stream = await client(key).chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0]!.id)).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(whole.choices[0]!.message.content);
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finish.map((c) => c.choices[0]!.finish_reason)).toEqual([whole.choices[0]!.finish_reason]);
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(chunks.at(-1)!.usage).toEqual(whole.usage);

    // Without include_usage there is no usage chunk; the raw wire ends with data: [DONE].
    const raw = await fetch(`${t.url}/openai/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...body, stream: true }) });
    expect(raw.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await raw.text();
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(text).not.toContain('"usage"');
  });

  it('serves an upstream model through the fake, passing max_completion_tokens, temperature, top_p and stop', async () => {
    fake.reset();
    const res = await client(key).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'developer', content: 'Be brief.' }, { role: 'user', content: 'hi' }], max_completion_tokens: 50, temperature: 0.3, top_p: 0.9, stop: ['END'], user: 'u-1' });
    expect(res.choices[0]!.message.content).toBe('Hello from the fake vendor.');
    expect(res.model).toBe('gpt-test');
    expect(fake.requests[0]!.body).toMatchObject({ model: 'gpt-test', max_tokens: 50, temperature: 0.3, top_p: 0.9, stop: ['END'], messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] });
  });

  it('falls back to the next model when the provider fails before the first token, never after output started', async () => {
    fake.reset();
    fake.script({ failNext: { count: 1, status: 503 } });
    const served = await client(key).chat.completions.create({ model: 'gpt-flaky', messages: [{ role: 'user', content: 'todo API' }], max_tokens: 100 });
    expect(served.model).toBe('sandbox');
    fake.script({ failNext: { count: 1, status: 429, retryAfter: 1 } });
    const stream = await client(key).chat.completions.create({ model: 'gpt-flaky', messages: [{ role: 'user', content: 'todo API' }], max_tokens: 100, stream: true });
    const models = new Set<string>();
    for await (const c of stream) models.add(c.model);
    expect([...models]).toEqual(['sandbox']);
    // The same on /api/v1/generate: the result, its history entry and its usage name the model that served.
    fake.script({ resetNext: 1 });
    const generated = await request(`${t.url}/api/v1/generate`, { token: key, body: { prompt: 'todo API', model: 'gpt-flaky', max_tokens: 100 } });
    expect(generated.status, generated.text).toBe(200);
    expect(generated.body.model).toBe('sandbox');
    expect(generated.headers.get('server-timing')).toMatch(/^upstream;dur=[\d.]+, gateway;dur=[\d.]+$/);
    // Cut after output started: the client sees the failure, and no fallback text is appended.
    fake.reset();
    fake.script({ reply: 'one two three four', cutAfterChunks: 2 });
    const cut = await client(key).chat.completions.create({ model: 'gpt-flaky', messages: [{ role: 'user', content: 'x' }], stream: true });
    let text = '';
    await expect((async () => { for await (const c of cut) text += c.choices[0]?.delta.content ?? ''; })()).rejects.toBeInstanceOf(OpenAI.APIError);
    expect(text).toBe('one two ');
    fake.reset();
  });
});

describe('completions and models', () => {
  it('fills in the middle with the sandbox model (prompt + suffix), JSON and streamed alike', async () => {
    const body = { model: 'sandbox', prompt: 'function add(a, b) {\n  ', suffix: '\n}\n', max_tokens: 64 };
    const res = await client(key).completions.create(body);
    expect(res.object).toBe('text_completion');
    expect(res.choices[0]!.text).toBe('// sandbox fill-in-the-middle: 2 lines before, 3 after');
    const stream = await client(key).completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage;
    for await (const c of stream) { text += c.choices[0]?.text ?? ''; usage ??= c.usage ?? undefined; }
    expect(text).toBe(res.choices[0]!.text);
    expect(usage).toEqual(res.usage);
    const python = await client(key).completions.create({ model: 'sandbox', prompt: 'def add(a, b):\n', suffix: '\n' });
    expect(python.choices[0]!.text).toBe('  # sandbox fill-in-the-middle: 2 lines before, 2 after');
  });

  it('passes prompt and suffix to an upstream that takes them (CODELOOM_OPENAI_FIM_MODELS), on its /v1/completions', async () => {
    fake.reset();
    fake.script({ reply: 'return a + b;' });
    const body = { model: 'gpt-fim', prompt: 'function add(a, b) {\n  ', suffix: '\n}\n', max_tokens: 32, temperature: 0 };
    const res = await client(key).completions.create(body);
    expect(res).toMatchObject({ object: 'text_completion', model: 'gpt-fim', choices: [{ text: 'return a + b;', finish_reason: 'stop' }] });
    expect(fake.requests[0]).toMatchObject({ path: '/v1/completions', body: { model: 'gpt-fim', prompt: body.prompt, suffix: body.suffix, max_tokens: 32, temperature: 0 } });
    const stream = await client(key).completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage;
    for await (const c of stream) { text += c.choices[0]?.text ?? ''; usage ??= c.usage ?? undefined; }
    expect(text).toBe('return a + b;');
    expect(usage).toEqual(res.usage);
    expect(fake.requests[1]).toMatchObject({ path: '/v1/completions', body: { stream: true, suffix: body.suffix } });
    fake.reset();
  });

  it('lists the models in OpenAI\'s shape', async () => {
    const list = await client(key).models.list();
    const ids = list.data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['sandbox', 'gpt-test', 'gpt-flaky', 'gpt-fim']));
    for (const m of list.data) expect(m).toMatchObject({ object: 'model', created: expect.any(Number), owned_by: expect.any(String) });
  });
});

describe('errors in OpenAI\'s shape', () => {
  it('401 for a bad key, 403 for a key without write:code, 404 for an unknown model or route', async () => {
    const bad = client('cl_live_nope').chat.completions.create({ model: 'sandbox', messages: [{ role: 'user', content: 'x' }] });
    await expect(bad).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await expect(bad).rejects.toMatchObject({ status: 401, code: 'invalid_token', type: 'authentication_error' });

    const readOnly = await makeKey({ scopes: ['read:code'] });
    await expect(client(readOnly).chat.completions.create({ model: 'sandbox', messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((await client(readOnly).models.list()).data.length).toBeGreaterThan(0);

    const unknown = client(key).chat.completions.create({ model: 'gpt-nope', messages: [{ role: 'user', content: 'x' }] });
    await expect(unknown).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(unknown).rejects.toMatchObject({ param: 'model', code: 'not_found' });

    const route = await request(`${t.url}/openai/v1/audio/speech`, { token: key, body: { input: 'x' } });
    expect(route.status).toBe(404);
    expect(route.body).toEqual({ error: { message: expect.any(String), type: 'not_found_error', param: null, code: 'not_found' } });
    const method = await request(`${t.url}/openai/v1/chat/completions`, { token: key });
    expect(method.status).toBe(405);
    expect(method.headers.get('allow')).toBe('POST');
    expect(method.body.error).toMatchObject({ type: 'invalid_request_error', code: 'method_not_allowed' });
    // Outside /openai/v1 errors stay problem documents.
    expect((await request(`${t.url}/api/v1/nope`, { token: key })).headers.get('content-type')).toMatch(/problem\+json/);
  });

  it('400 names the parameter: out of range, unsupported content parts, a suffix for a model without fill-in-the-middle', async () => {
    const hot = client(key).chat.completions.create({ model: 'sandbox', messages: [{ role: 'user', content: 'x' }], temperature: 5 });
    await expect(hot).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(hot).rejects.toMatchObject({ status: 400, param: 'temperature', type: 'invalid_request_error' });
    const image = client(key).chat.completions.create({ model: 'sandbox', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://x/y.png' } }] }] });
    await expect(image).rejects.toMatchObject({ status: 400, param: 'messages[0].content' });
    const fim = client(key).completions.create({ model: 'gpt-test', prompt: 'def f(', suffix: ')' });
    await expect(fim).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(fim).rejects.toMatchObject({ param: 'suffix' });
    await expect(fim).rejects.toThrow(/does not support fill-in-the-middle/);
    const raw = await request(`${t.url}/openai/v1/chat/completions`, { token: key, raw: '{"model":', headers: { 'content-type': 'application/json' } });
    expect(raw.status).toBe(400);
    expect(raw.body.error.code).toBe('malformed_json');
  });

  it('odd but valid bodies are answered; the ones OpenAI would refuse are 400s naming the parameter once', async () => {
    for (const body of [
      { messages: [{ role: 'assistant', content: 'hi' }] }, { messages: [{ role: 'user', content: null }] }, { messages: [{ role: 'user', content: [] }] },
      { messages: [{ role: 'user', content: '' }], max_tokens: 1 }, { messages: [{ role: 'user', content: 'x' }], stop: [] },
      { messages: [{ role: 'user', content: '\ud800 lone surrogate' }] },
    ]) expect((await request(`${t.url}/openai/v1/chat/completions`, { token: key, body })).status, JSON.stringify(body)).toBe(200);
    const refused: Array<[string, unknown, string, string]> = [
      ['chat/completions', { messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id', 'messages[0].tool_call_id is required on a tool message'],
      ['chat/completions', { messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role', 'messages[0].role must be one of: system, developer, user, assistant, tool'],
      ['chat/completions', { messages: [{ role: 'user', content: 'x' }], n: 2 }, 'n', 'n must be 1 (one choice per request)'],
      ['chat/completions', { messages: [] }, 'messages', 'messages must NOT have fewer than 1 items'],
      ['completions', { prompt: ['a', 'b'] }, 'prompt', 'prompt must be a string (or an array of one string)'],
      ['completions', { prompt: 'x', echo: true }, 'echo', 'echo must be false (echo is not supported)'],
    ];
    // NUL is refused in every field of every route (docs/api.md), here in OpenAI's error shape.
    const nul = await request(`${t.url}/openai/v1/chat/completions`, { token: key, body: { messages: [{ role: 'user', content: 'a\u0000b' }] } });
    expect(nul.status).toBe(400);
    expect(nul.body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(nul.body.error.message).toMatch(/NUL|control/i);
    for (const [route, body, param, message] of refused) {
      const res = await request(`${t.url}/openai/v1/${route}`, { token: key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.param).toBe(param);
      expect(res.body.error.message).toContain(`Invalid request: ${message}`);
    }
  });

  it('429 with Retry-After and the refusing limit\'s headers (a key with requests_per_minute 2)', async () => {
    await awayFromWindowEnd();
    const limited = await makeKey({ requests_per_minute: 2 });
    const c = client(limited);
    await c.models.list();
    await c.models.list();
    const refused = await c.models.list().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    const e = refused as InstanceType<typeof OpenAI.RateLimitError>;
    expect(e.code).toBe('rate_limited');
    expect(Number(e.headers?.get('retry-after'))).toBeGreaterThan(0);
    expect(e.headers?.get('x-ratelimit-limit')).toBe('2');
    expect(e.message).toMatch(/API key's per-minute limit of 2 requests/);
  });

  it('OpenAPI documents the OpenAI-compatible routes with their error shape, usage and key updates', async () => {
    const doc = (await request(`${t.url}/openapi.json`)).body;
    for (const [path, method] of [['/openai/v1/chat/completions', 'post'], ['/openai/v1/completions', 'post'], ['/openai/v1/models', 'get'], ['/api/v1/usage', 'get'], ['/api/v1/api-keys/{id}', 'patch']] as const) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    const error = doc.paths['/openai/v1/chat/completions'].post.responses['429'].content['application/json'].schema;
    expect(error.properties.error.required).toEqual(['message', 'type', 'param', 'code']);
  });

  it('a session token works as the bearer too', async () => {
    const res = await client(session).chat.completions.create({ model: 'sandbox', messages: [{ role: 'user', content: 'hello' }], max_tokens: 10 });
    expect(res.choices[0]!.finish_reason).toBe('length');
    expect(res.usage!.completion_tokens).toBe(10);
  });

  it('a test key (cl_test_…) is served by the sandbox model whatever it asks for', async () => {
    const testKey = await makeKey({ environment: 'sandbox' });
    expect(testKey).toMatch(/^cl_test_/);
    fake.reset();
    const res = await client(testKey).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'todo API' }], max_tokens: 30 });
    expect(res.model).toBe('sandbox');
    expect(fake.requests).toEqual([]);
  });

  it('a client that leaves a stream before its first token aborts the upstream call', async () => {
    fake.reset();
    fake.script({ hang: true });
    const req = httpRequest(`${t.url}/openai/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
    req.on('error', () => { /* we hang up */ });
    req.end(JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], stream: true }));
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    req.destroy();
    await fake.waitForAborts(1);
    fake.reset();
  });
});

describe('Server-Timing on /api/v1/generate', () => {
  it('a JSON answer has it as a header; a streamed one as an HTTP trailer, once the call is done', async () => {
    const json = await request(`${t.url}/api/v1/generate`, { token: key, body: { prompt: 'todo API', model: 'gpt-test', max_tokens: 50 } });
    expect(json.headers.get('server-timing')).toMatch(/^upstream;dur=[\d.]+, gateway;dur=[\d.]+$/);
    const { headers, trailers, body } = await new Promise<{ headers: Record<string, unknown>; trailers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = httpRequest(`${t.url}/api/v1/generate`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => { text += c; });
        res.on('end', () => resolve({ headers: res.headers, trailers: res.trailers, body: text }));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ prompt: 'todo API', model: 'sandbox', max_tokens: 50, stream: true }));
    });
    expect(headers.trailer).toBe('Server-Timing');
    expect(body).toContain('event: complete');
    expect(trailers['server-timing']).toMatch(/^upstream;dur=[\d.]+, gateway;dur=[\d.]+$/);
  });
});
