/**
 * Generations over the streaming channel with the sandbox model (docs/streaming.md,
 * CONTRACT §8): token order and completeness, `complete` = the §7 result saved in
 * history, streamTokens:false, server-made ids, many generations at once on one
 * socket, bad frames (error frame, connection stays usable), rate limits per generation.
 */
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { connect, generateOverBudget, type WsClient } from './helpers/ws-client.js';

describe('WebSocket /api/v1/stream: generations with the sandbox model', () => {
  let t: TestServer;
  let token: string;
  let c: WsClient;
  const body = { prompt: 'REST API for todos', language: 'typescript', model: 'sandbox', context: { framework: 'fastify', includeTests: true } };

  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t.close(); });
  // A fresh account per test: sandbox-model output counts against the free plan's 20,000 tokens per minute.
  beforeEach(async () => {
    token = (await registerUser(t.url, { ip: nextIp() })).token;
    c = await connect(t.url, token);
  });
  afterEach(() => { c.ws.close(); });

  it('streams tokens in order whose concatenation is the output, then the §7 result, equal to POST /generate', async () => {
    c.send({ type: 'generate', id: 'r1', ...body });
    const { end, tokens, frames } = await c.result('r1');
    expect(end.event, JSON.stringify(end.data)).toBe('complete');
    expect(tokens.length).toBeGreaterThan(10);
    for (const f of frames.slice(0, -1)) expect(f).toEqual({ event: 'token', id: 'r1', data: expect.any(String) });
    const r = end.data;
    expect(tokens.join('')).toBe(r.output);
    expect(r).toMatchObject({ id: expect.stringMatching(/^gen_/), language: 'typescript', model: 'sandbox', code: expect.any(String), processing_time: expect.any(Number), created_at: expect.any(String) });
    expect(r.files.length).toBeGreaterThanOrEqual(1);
    expect(r.files.some((f: { content: string }) => f.content === r.code)).toBe(true);
    expect(r.tokens_used).toBe(r.usage.prompt_tokens + r.usage.completion_tokens);
    // The sandbox model is deterministic: the same request over HTTP gives the same text, so the tokens came in order.
    const http = await request(`${t.url}/api/v1/generate`, { token, body, headers: { 'x-forwarded-for': nextIp() } });
    expect(http.status).toBe(200);
    expect(tokens.join('')).toBe(http.body.output);
    expect(r.files).toEqual(http.body.files);
  });

  it('saves the `complete` result in history (GET /api/v1/generations/{id}, and /v1/…)', async () => {
    c.send({ type: 'generate', id: 'saved', ...body, prompt: 'CLI that counts words', language: 'python' });
    const { end } = await c.result('saved');
    expect(end.event).toBe('complete');
    for (const prefix of ['/api/v1', '/v1']) {
      const one = await request(`${t.url}${prefix}/generations/${end.data.id}`, { token });
      expect(one.status).toBe(200);
      expect(one.body).toEqual(end.data);
    }
  });

  it('streamTokens: false sends only `complete`', async () => {
    c.send({ type: 'generate', id: 'quiet', ...body, streamTokens: false });
    const { end, frames } = await c.result('quiet');
    expect(end.event).toBe('complete');
    expect(frames).toEqual([end]);
    expect(end.data.output.length).toBeGreaterThan(100);
  });

  it('makes an id when the client gives none and uses it in every frame of that request', async () => {
    c.send({ type: 'generate', ...body, prompt: 'hello world script', language: 'bash' });
    c.send({ type: 'generate', ...body, prompt: 'hello world script', language: 'bash' });
    const first = await c.waitFor((f) => f.event === 'complete');
    const second = await c.waitFor((f) => f.event === 'complete' && f.id !== first.id);
    for (const end of [first, second]) {
      expect(end.id).toMatch(/^\S{1,128}$/);
      const { tokens } = await c.result(end.id!);
      expect(tokens.length).toBeGreaterThan(0);
      expect(tokens.join('')).toBe(end.data.output);
    }
    // Every token and result frame carries one of the two ids.
    expect(c.frames.filter((f) => f.event !== 'connected').every((f) => f.id === first.id || f.id === second.id)).toBe(true);
  });

  it('runs two generations at once, each complete with its own tokens', async () => {
    c.send({ type: 'generate', id: 'a', ...body, prompt: 'REST API for books' });
    c.send({ type: 'generate', id: 'b', ...body, prompt: 'snake game', language: 'python' });
    const [a, b] = await Promise.all([c.result('a'), c.result('b')]);
    expect([a.end.event, b.end.event]).toEqual(['complete', 'complete']);
    expect(a.tokens.join('')).toBe(a.end.data.output);
    expect(b.tokens.join('')).toBe(b.end.data.output);
    expect(a.end.data.output).not.toBe(b.end.data.output);
    expect([a.end.data.prompt, b.end.data.prompt]).toEqual(['REST API for books', 'snake game']);
  });

  it('runs fifty generations at once on one socket, interleaved, with no tokens mixed up', async () => {
    const sb = await connect(t.url, token, { headers: { 'x-environment': 'sandbox' } });
    const langs = ['typescript', 'python', 'go', 'bash', 'rust'];
    const reqs = Array.from({ length: 50 }, (_, i) => ({ id: `m${i}`, prompt: `REST API for widgets number ${i}`, language: langs[i % langs.length]! }));
    for (const r of reqs) sb.send({ type: 'generate', model: 'sandbox', ...r });
    const results = await Promise.all(reqs.map((r) => sb.result(r.id, 20_000)));
    results.forEach(({ end, tokens }, i) => {
      expect(end.event, `${reqs[i]!.id}: ${JSON.stringify(end.data).slice(0, 200)}`).toBe('complete');
      expect(end.data).toMatchObject({ prompt: reqs[i]!.prompt, language: reqs[i]!.language });
      expect(tokens.join(''), reqs[i]!.id).toBe(end.data.output);
    });
    expect(new Set(results.map((r) => r.end.data.id)).size).toBe(50);
    // They really ran at once: tokens of many requests arrived before the first one completed.
    const firstEnd = sb.frames.findIndex((f) => f.event === 'complete');
    expect(new Set(sb.frames.slice(0, firstEnd).filter((f) => f.event === 'token').map((f) => f.id)).size).toBeGreaterThan(1);
    // X-Environment: sandbox on the upgrade put the connection in the sandbox: its history is the sandbox one.
    const id = results[0]!.end.data.id;
    expect((await request(`${t.url}/api/v1/generations/${id}`, { token, headers: { 'x-environment': 'sandbox' } })).status).toBe(200);
    expect((await request(`${t.url}/api/v1/generations/${id}`, { token })).status).toBe(404);
    sb.ws.close();
  });

  it('answers every kind of bad frame with an error frame and stays open (ping → pong after each)', async () => {
    const cases: Array<{ name: string; send: () => void; status: number; code?: string; id?: string; path?: string }> = [
      { name: 'invalid JSON', send: () => c.send('{"type": "ping",'), status: 400, code: 'malformed_json' },
      { name: 'JSON array', send: () => c.send('[{"type":"ping"}]'), status: 400 },
      { name: 'JSON string', send: () => c.send('"ping"'), status: 400 },
      { name: 'JSON null', send: () => c.send('null'), status: 400 },
      { name: 'JSON number', send: () => c.send('42'), status: 400 },
      { name: 'unknown type', send: () => c.send({ type: 'dance', id: 'u1' }), status: 400, code: 'validation_failed', id: 'u1', path: '/type' },
      { name: 'no type', send: () => c.send({ prompt: 'hi' }), status: 400, code: 'validation_failed', path: '/type' },
      { name: 'generate without prompt', send: () => c.send({ type: 'generate', id: 'np' }), status: 400, code: 'validation_failed', id: 'np', path: '/prompt' },
      { name: 'empty prompt', send: () => c.send({ type: 'generate', id: 'ep', prompt: '' }), status: 400, code: 'validation_failed', id: 'ep', path: '/prompt' },
      { name: 'prompt a number', send: () => c.send({ type: 'generate', id: 'pn', prompt: 42 }), status: 400, code: 'validation_failed', id: 'pn', path: '/prompt' },
      { name: 'streamTokens a string', send: () => c.send({ type: 'generate', id: 'st', prompt: 'x', streamTokens: 'yes' }), status: 400, code: 'validation_failed', id: 'st', path: '/streamTokens' },
      { name: 'context nested', send: () => c.send({ type: 'generate', id: 'cx', prompt: 'x', context: { framework: { a: 1 } } }), status: 400, code: 'validation_failed', id: 'cx' },
      { name: 'id a number', send: () => c.send({ type: 'generate', id: 7, prompt: 'x' }), status: 400, code: 'validation_failed', path: '/id' },
      { name: 'id too long', send: () => c.send({ type: 'generate', id: 'i'.repeat(129), prompt: 'x' }), status: 400, code: 'validation_failed', path: '/id' },
      { name: 'cancel without id', send: () => c.send({ type: 'cancel' }), status: 400, code: 'validation_failed', path: '/id' },
      { name: 'subscribe without run_id', send: () => c.send({ type: 'subscribe' }), status: 400, code: 'validation_failed', path: '/run_id' },
      { name: 'unknown model', send: () => c.send({ type: 'generate', id: 'um', prompt: 'x', model: 'nope' }), status: 400, code: 'validation_failed', id: 'um', path: '/model' },
      { name: 'unknown language', send: () => c.send({ type: 'generate', id: 'ul', prompt: 'x', language: 'klingon' }), status: 400, code: 'validation_failed', id: 'ul', path: '/language' },
      { name: 'binary frame', send: () => c.ws.send(Buffer.from('{"type":"ping"}'), { binary: true }), status: 400, code: 'validation_failed' },
      { name: 'frame over 256 KiB', send: () => c.send({ type: 'generate', id: 'big', prompt: 'x'.repeat(256 * 1024) }), status: 413, code: 'payload_too_large' },
    ];
    for (const k of cases) {
      const mark = c.frames.length;
      k.send();
      const err = await c.waitFor((f) => f.event === 'error', mark);
      expect(err.data, k.name).toMatchObject({ status: k.status, message: expect.any(String), ...(k.code ? { code: k.code } : {}) });
      if (k.status === 400 && !k.code) expect(['malformed_json', 'validation_failed'], k.name).toContain(err.data.code);
      if (k.id) expect(err.id, k.name).toBe(k.id);
      if (k.path) expect(err.data.errors.map((e: { path: string }) => e.path), k.name).toContain(k.path);
      expect(await c.ping(), k.name).toEqual({ event: 'pong' });
      // Exactly one answer per bad frame (the binary ping, say, is not also answered with a pong).
      expect(c.frames.slice(mark).map((f) => f.event), k.name).toEqual(['error', 'pong']);
    }
    expect(c.ws.readyState).toBe(WebSocket.OPEN);
    const longest = 'i'.repeat(128);
    c.send({ type: 'generate', id: longest, ...body });
    expect((await c.result(longest)).end.event).toBe('complete');
  });

  it('a frame over 4 MiB is refused by the WebSocket layer: close 1009', async () => {
    const other = await connect(t.url, token);
    other.send({ type: 'generate', id: 'huge', prompt: 'x'.repeat(4 * 1024 * 1024 + 1) });
    expect((await other.closed).code).toBe(1009);
    expect(other.frames.filter((f) => f.event !== 'connected')).toEqual([]);
    expect(await c.ping()).toEqual({ event: 'pong' });
  });

  it('subscribing to a run that does not exist (or is not yours) is a 404 error frame', async () => {
    const mark = c.frames.length;
    c.send({ type: 'subscribe', run_id: 'run_doesnotexist' });
    expect(await c.waitFor((f) => f.event === 'error', mark)).toMatchObject({ id: 'run_doesnotexist', data: { status: 404, code: 'not_found' } });
    expect(await c.ping()).toEqual({ event: 'pong' });
  });

  it('refuses a second running generation with the same id (conflict), the first completes', async () => {
    c.send({ type: 'generate', id: 'dup', ...body });
    c.send({ type: 'generate', id: 'dup', ...body });
    const conflict = await c.waitFor((f) => f.id === 'dup' && f.event === 'error');
    expect(conflict.data).toMatchObject({ status: 409, code: 'conflict' });
    const done = await c.waitFor((f) => f.id === 'dup' && f.event === 'complete');
    expect(done.data.output.length).toBeGreaterThan(0);
  });
});

describe('WebSocket /api/v1/stream: rate limits apply per generation', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t.close(); });

  it('counts each generate as one request of the account', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    const c = await connect(t.url, u.token);
    const remaining = async () => Number((await request(`${t.url}/api/v1/user/profile`, { token: u.token })).headers.get('x-ratelimit-remaining'));
    const before = await remaining();
    for (const id of ['g1', 'g2', 'g3']) c.send({ type: 'generate', id, prompt: 'hello world script', language: 'bash', model: 'sandbox', max_tokens: 50 });
    for (const id of ['g1', 'g2', 'g3']) expect((await c.result(id)).end.event).toBe('complete');
    expect(before - (await remaining())).toBe(4);
    c.ws.close();
  });

  it('a generate over the budget gets a 429 error frame with retry_after and rate_limit, and the socket stays open', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    const c = await connect(t.url, u.token);
    const { end, tokens } = await generateOverBudget(c, t.url, u.token);
    expect(tokens).toEqual([]);
    expect(end).toMatchObject({ event: 'error', id: 'over', data: { status: 429, code: 'rate_limited', message: expect.any(String) } });
    const now = Math.floor(Date.now() / 1000);
    expect(Number.isInteger(end.data.retry_after)).toBe(true);
    expect(end.data.retry_after).toBeGreaterThanOrEqual(1);
    expect(end.data.retry_after).toBeLessThanOrEqual(60);
    expect(end.data.rate_limit).toEqual({ limit: 100, remaining: 0, reset: expect.any(Number) });
    expect(end.data.rate_limit.reset).toBeGreaterThan(now - 1);
    expect(end.data.rate_limit.reset).toBeLessThanOrEqual(now + 61);
    expect(await c.ping()).toEqual({ event: 'pong' });
    c.ws.close();
  });
});
