/**
 * The streaming channel in front of an OpenAI-compatible provider (the fake upstream
 * of test/fakes): exact token order, cancel and disconnect abort the upstream call,
 * a stream cut mid-way ends in a 502 error frame (never a `complete`) without hurting
 * other requests, backpressure from a client that stops reading, and graceful shutdown.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { connect, type WsClient } from './helpers/ws-client.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const REPLY = 'Here you go.\n\n```typescript src/todos.ts\nexport const todos: string[] = [];\n```\n';
const CHUNKS = ['Here', ' you', ' go.', '\n\n```', 'typescript src/', 'todos.ts\n', 'export const todos', ': string[] = [];', '\n```', '\n'];
const fakeEnv = (fake: FakeVendor) => ({ OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_UPSTREAM_TIMEOUT: '1' });

describe('WebSocket /api/v1/stream with an OpenAI-compatible upstream', () => {
  let fake: FakeVendor;
  let t: TestServer;
  let token: string;
  let c: WsClient;
  const gen = (id: string, extra: Record<string, unknown> = {}) => c.send({ type: 'generate', id, prompt: 'todo list', model: 'gpt-test', language: 'typescript', ...extra });

  beforeAll(async () => {
    fake = await startOpenAIFake();
    t = await startTestServer({ env: fakeEnv(fake) });
  });
  afterAll(async () => { await t.close(); await fake.close(); });
  beforeEach(async () => {
    fake.reset();
    fake.script({ reply: REPLY, chunks: CHUNKS });
    token = (await registerUser(t.url, { ip: nextIp() })).token;
    c = await connect(t.url, token);
  });
  afterEach(() => { c.ws.terminate(); });

  it('sends the upstream deltas as token frames, in order and complete, then `complete` (saved in history)', async () => {
    gen('o1');
    const { end, tokens } = await c.result('o1');
    expect(end.event, JSON.stringify(end.data)).toBe('complete');
    expect(tokens).toEqual(CHUNKS);
    expect(tokens.join('')).toBe(end.data.output);
    expect(end.data).toMatchObject({ output: REPLY, model: 'gpt-test', files: [{ path: 'src/todos.ts', content: 'export const todos: string[] = [];\n' }], code: 'export const todos: string[] = [];\n' });
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: 'gpt-test', stream: true });
    const saved = await request(`${t.url}/api/v1/generations/${end.data.id}`, { token });
    expect(saved.status).toBe(200);
    expect(saved.body).toEqual(end.data);
  });

  it('cancel ends the request with error 499 `cancelled` and aborts the upstream call', async () => {
    fake.script({ chunks: undefined, reply: 'word '.repeat(300), chunkDelayMs: 30 });
    gen('c1');
    await c.waitFor((f) => f.id === 'c1' && f.event === 'token');
    c.send({ type: 'cancel', id: 'c1' });
    const { end } = await c.result('c1');
    expect(end).toMatchObject({ event: 'error', id: 'c1', data: { status: 499, code: 'cancelled', message: expect.any(String) } });
    await fake.waitForAborts(1, 3_000);
    // The connection goes on: cancelling what no longer runs is a 404, and a new generation completes.
    const mark = c.frames.length;
    c.send({ type: 'cancel', id: 'c1' });
    expect(await c.waitFor((f) => f.event === 'error', mark)).toMatchObject({ id: 'c1', data: { status: 404, code: 'not_found' } });
    fake.script({ chunks: CHUNKS, chunkDelayMs: 0 });
    gen('c2');
    expect((await c.result('c2')).end.event).toBe('complete');
  });

  it('cancelling one request leaves the others on the socket running', async () => {
    fake.script({ chunks: undefined, reply: 'word '.repeat(40), chunkDelayMs: 10 });
    gen('keep');
    gen('drop');
    await c.waitFor((f) => f.id === 'drop' && f.event === 'token');
    c.send({ type: 'cancel', id: 'drop' });
    const [keep, drop] = await Promise.all([c.result('keep'), c.result('drop')]);
    expect(drop.end.data.code).toBe('cancelled');
    expect(keep.end.event).toBe('complete');
    expect(keep.tokens.join('')).toBe('word '.repeat(40));
  });

  it('a client that disconnects mid-stream gets its upstream calls aborted', async () => {
    fake.script({ chunks: undefined, reply: 'word '.repeat(300), chunkDelayMs: 30 });
    gen('d1');
    gen('d2');
    await c.waitFor((f) => f.id === 'd2' && f.event === 'token');
    c.ws.terminate();
    await fake.waitForAborts(2, 3_000);
    expect(fake.aborts).toBe(2);
  });

  it('an upstream cut mid-stream ends that request with a 502 error frame, never `complete`; others are unaffected', async () => {
    fake.script({ cutAfterChunks: 3 });
    gen('cut');
    c.send({ type: 'generate', id: 'side', prompt: 'hello world script', language: 'bash', model: 'sandbox' });
    const [cut, side] = await Promise.all([c.result('cut'), c.result('side')]);
    expect(cut.tokens).toEqual(CHUNKS.slice(0, 3));
    expect(cut.end).toMatchObject({ event: 'error', id: 'cut', data: { status: 502, code: 'upstream_error', message: expect.any(String) } });
    expect(c.frames.some((f) => f.id === 'cut' && f.event === 'complete')).toBe(false);
    expect(side.end.event).toBe('complete');
    expect(side.tokens.join('')).toBe(side.end.data.output);
    fake.script({ cutAfterChunks: undefined });
    gen('after');
    const after = await c.result('after');
    expect(after.end.event).toBe('complete');
    expect(after.tokens).toEqual(CHUNKS);
  });

  it('backpressure: a client that stops reading holds the generation back; on resume every token arrives in order', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    // About 12 MB of token frames: far more than the socket buffers between client and server hold.
    const big = Array.from({ length: 4_000 }, (_, i) => `${String(i).padStart(5, '0')}${'x'.repeat(3_000)}\n`);
    fake.script({ chunks: big, usage: { promptTokens: 10, completionTokens: 4_000 } });
    const socket = (c.ws as unknown as { _socket: import('node:net').Socket })._socket;
    socket.pause();
    gen('bp');
    // Paused longer than the 1 s upstream timeout: the reader's pace must not count as upstream idleness.
    await sleep(1_500);
    const history = await request(`${t.url}/api/v1/generations`, { token });
    expect(history.body.pagination.total, 'finished while the client was not reading').toBe(0);
    socket.resume();
    const { end, tokens } = await c.result('bp', 30_000);
    process.off('warning', onWarning);
    expect(end.event, JSON.stringify(end.data).slice(0, 300)).toBe('complete');
    expect(tokens.length).toBe(big.length);
    expect(tokens.every((tok, i) => tok === big[i])).toBe(true);
    expect(end.data.output).toBe(big.join(''));
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});

describe('WebSocket /api/v1/stream: backpressure with many generations', () => {
  it('twenty generations held by one stalled reader all resume, in order, without listener leaks', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    const chunks = Array.from({ length: 300 }, (_, i) => `${String(i).padStart(4, '0')}${'y'.repeat(2_000)}\n`);
    // Its own server with the default upstream timeout: here the fake shares one busy event loop with twenty streams.
    const fake = await startOpenAIFake({ script: { chunks, usage: { promptTokens: 10, completionTokens: 300 } } });
    const t = await startTestServer({ env: { ...fakeEnv(fake), CODELOOM_UPSTREAM_TIMEOUT: '30' } });
    try {
      const c = await connect(t.url, (await registerUser(t.url, { ip: nextIp() })).token);
      const socket = (c.ws as unknown as { _socket: import('node:net').Socket })._socket;
      socket.pause();
      const ids = Array.from({ length: 20 }, (_, i) => `p${i}`);
      // Each call holds prompt + max_tokens of the free plan's 20,000 tokens a minute until it settles: twenty at once fit with max_tokens 400.
      for (const id of ids) c.send({ type: 'generate', id, prompt: 'todo list', model: 'gpt-test', max_tokens: 400 });
      await sleep(700);
      socket.resume();
      const results = await Promise.all(ids.map((id) => c.result(id, 30_000)));
      for (const [i, { end, tokens }] of results.entries()) {
        expect(end.event, `${ids[i]}: ${JSON.stringify(end.data).slice(0, 200)}`).toBe('complete');
        expect(tokens.length, ids[i]).toBe(chunks.length);
        expect(tokens.every((tok, k) => tok === chunks[k]), ids[i]).toBe(true);
      }
      expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
      c.ws.close();
    } finally {
      process.off('warning', onWarning);
      await t.close();
      await fake.close();
    }
  });
});

describe('WebSocket /api/v1/stream on server shutdown', () => {
  it('ends running generations with `shutting_down`, closes with 1001 and aborts the upstream calls', async () => {
    const fake = await startOpenAIFake({ script: { reply: 'word '.repeat(500), chunkDelayMs: 20 } });
    const t = await startTestServer({ env: fakeEnv(fake) });
    let closing: Promise<void> | undefined;
    try {
      const { token } = await registerUser(t.url, { ip: nextIp() });
      const busy = await connect(t.url, token);
      const idle = await connect(t.url, token);
      busy.send({ type: 'generate', id: 's1', prompt: 'long one', model: 'gpt-test' });
      busy.send({ type: 'generate', id: 's2', prompt: 'quiet one', model: 'gpt-test', streamTokens: false });
      await busy.waitFor((f) => f.id === 's1' && f.event === 'token');
      closing = t.close();
      // Asked for while the server stops: never started (no tokens); answered with shutting_down unless the socket was already closing.
      busy.send({ type: 'generate', id: 's3', prompt: 'too late', model: 'gpt-test' });
      const [s1, s2, busyClose, idleClose] = await Promise.all([busy.result('s1'), busy.result('s2'), busy.closed, idle.closed]);
      await closing;
      const s3 = busy.frames.filter((f) => f.id === 's3');
      expect(s3.every((f) => f.event === 'error' && f.data.code === 'shutting_down'), JSON.stringify(s3).slice(0, 300)).toBe(true);
      for (const r of [s1, s2]) expect(r.end).toMatchObject({ event: 'error', data: { status: 503, code: 'shutting_down', message: expect.any(String) } });
      expect(s1.end.id).toBe('s1');
      expect(s2.end.id).toBe('s2');
      expect(busyClose.code).toBe(1001);
      expect(idleClose.code).toBe(1001);
      expect(busy.frames.some((f) => f.event === 'complete')).toBe(false);
      await fake.waitForAborts(2, 3_000);
    } finally {
      await (closing ?? t.close());
      await fake.close();
    }
  });

  it('is not held up by a client that stopped reading: its generation is aborted at once', async () => {
    // About 8 MB/s for several seconds: the fake is still sending when the server stops, long after the reader's buffers filled up.
    const chunks = Array.from({ length: 4_000 }, (_, i) => `${String(i).padStart(4, '0')}${'z'.repeat(8_000)}\n`);
    const fake = await startOpenAIFake({ script: { chunks, chunkDelayMs: 1, usage: { promptTokens: 10, completionTokens: 4_000 } } });
    const t = await startTestServer({ env: { ...fakeEnv(fake), CODELOOM_UPSTREAM_TIMEOUT: '30' } });
    let closing: Promise<void> | undefined;
    try {
      const c = await connect(t.url, (await registerUser(t.url, { ip: nextIp() })).token);
      (c.ws as unknown as { _socket: import('node:net').Socket })._socket.pause();
      c.send({ type: 'generate', id: 'stalled', prompt: 'big', model: 'gpt-test' });
      await sleep(1_500);
      const started = Date.now();
      closing = t.close();
      await closing;
      expect(Date.now() - started, 'close() waited for the stalled reader').toBeLessThan(1_500);
      await fake.waitForAborts(1, 3_000);
    } finally {
      await (closing ?? t.close());
      await fake.close();
    }
  });
});
