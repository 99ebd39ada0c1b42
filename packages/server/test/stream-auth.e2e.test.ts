/**
 * The streaming channel's front door (docs/streaming.md "Authenticate", CONTRACT §8):
 * both ways to authenticate, with a session token and with an API key; 4401 for a
 * missing, wrong or late credential; the `connected` frame; 403/4403 for a credential
 * without write:code; plain HTTP on the address → 426; the /v1/stream alias.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { bye, openWs, type Frame, type OpenWsOptions, type WsClient } from './helpers/ws-client.js';

/** Opens a socket (without waiting for `connected`); frames are awaited for 5 s. */
const connect = (base: string, opts: OpenWsOptions = {}) => openWs(base, { timeoutMs: 5_000, ...opts });

describe('WebSocket /api/v1/stream: authentication and access', () => {
  let t: TestServer;
  let user: Awaited<ReturnType<typeof registerUser>>;
  let apiKey: string;
  let readOnlyKey: string;

  beforeAll(async () => {
    t = await startTestServer({ env: { CODELOOM_WS_AUTH_TIMEOUT: '1', CODELOOM_WS_MAX_CONNECTIONS_PER_ACCOUNT: '3' } });
    user = await registerUser(t.url, { ip: nextIp() });
    const full = await request(`${t.url}/api/v1/api-keys`, { token: user.token, body: { name: 'ws' } });
    const ro = await request(`${t.url}/api/v1/api-keys`, { token: user.token, body: { name: 'ws-ro', scopes: ['read:code'] } });
    expect([full.status, ro.status]).toEqual([201, 201]);
    apiKey = full.body.key;
    readOnlyKey = ro.body.key;
  });
  afterAll(async () => { await t.close(); });

  /** The connection works: a ping is answered and a tiny generation completes. */
  async function expectUsable(c: WsClient, id: string) {
    const mark = c.frames.length;
    c.send({ type: 'ping' });
    expect(await c.waitFor((f) => f.event === 'pong', mark)).toEqual({ event: 'pong' });
    // max_tokens keeps the many small generations of this file far below the free plan's tokens per minute.
    c.send({ type: 'generate', id, prompt: 'hello world script', language: 'bash', model: 'sandbox', max_tokens: 16 });
    const end = await c.waitFor((f) => f.id === id && (f.event === 'complete' || f.event === 'error'), mark);
    expect(end.event, JSON.stringify(end)).toBe('complete');
    expect(end.data.id).toMatch(/^gen_/);
  }

  const expectConnected = (f: Frame) => {
    expect(f).toEqual({ event: 'connected', data: { connection_id: expect.stringMatching(/^con_/), user_id: user.user.id } });
  };

  it('accepts a session token in the Authorization header and sends `connected` first', async () => {
    const c = await connect(t.url, { token: user.token });
    expectConnected(await c.waitFor(() => true));
    expect(c.frames[0]!.event).toBe('connected');
    await expectUsable(c, 'h-jwt');
    await bye(c);
  });

  it('accepts an API key in the Authorization header', async () => {
    const c = await connect(t.url, { token: apiKey });
    expectConnected(await c.waitFor((f) => f.event === 'connected'));
    await expectUsable(c, 'h-key');
    await bye(c);
  });

  it('accepts a first {"type":"auth"} frame with a session token, and with an API key', async () => {
    for (const token of [user.token, apiKey]) {
      const c = await connect(t.url);
      c.send({ type: 'auth', token });
      expectConnected(await c.waitFor((f) => f.event === 'connected'));
      expect(c.frames[0]!.event).toBe('connected');
      await expectUsable(c, 'frame-auth');
      await bye(c);
    }
  });

  it('gives every connection its own connection_id', async () => {
    const [a, b] = await Promise.all([connect(t.url, { token: user.token }), connect(t.url, { token: apiKey })]);
    const [ca, cb] = await Promise.all([a.waitFor((f) => f.event === 'connected'), b.waitFor((f) => f.event === 'connected')]);
    expect(ca.data.connection_id).not.toBe(cb.data.connection_id);
    await Promise.all([bye(a), bye(b)]);
  });

  it('a second auth frame renews the credential for the same account; another account\'s gets a 409 and the connection stays', async () => {
    const c = await connect(t.url, { token: apiKey });
    const first = await c.waitFor((f) => f.event === 'connected');
    c.send({ type: 'auth', token: user.token });
    const renewed = await c.waitFor((f) => f.event === 'connected', c.frames.indexOf(first) + 1);
    expect(renewed.data).toEqual(first.data);
    await expectUsable(c, 'after-renewal');
    const stranger = await registerUser(t.url, { ip: nextIp() });
    const mark = c.frames.length;
    c.send({ type: 'auth', token: stranger.token });
    expect(await c.waitFor((f) => f.event === 'error', mark)).toMatchObject({ data: { status: 409, code: 'conflict' } });
    await expectUsable(c, 'after-second-auth');
    await bye(c);
  });

  it('holds an account to its connection limit: over it, an error frame (429) and close 4429; a closed one frees its place', async () => {
    const other = await registerUser(t.url, { ip: nextIp() });
    const open = await Promise.all([1, 2, 3].map(() => connect(t.url, { token: other.token })));
    for (const c of open) await c.waitFor((f) => f.event === 'connected');
    const over = await connect(t.url, { token: other.token });
    expect((await over.closed).code).toBe(4429);
    expect(over.frames).toEqual([{ event: 'error', data: { status: 429, code: 'rate_limited', message: expect.any(String) } }]);
    // Refused by auth frame with a generate right behind it: the generate is not run either.
    const piped = await connect(t.url);
    piped.send({ type: 'auth', token: other.token });
    piped.send({ type: 'generate', id: 'sneaky', prompt: 'hello world script', language: 'bash', model: 'sandbox', max_tokens: 16 });
    expect((await piped.closed).code).toBe(4429);
    await new Promise((r) => setTimeout(r, 300));
    expect((await request(`${t.url}/api/v1/generations`, { token: other.token })).body.pagination.total).toBe(0);
    // Another account is not affected.
    const stranger = await connect(t.url, { token: user.token });
    await stranger.waitFor((f) => f.event === 'connected');
    open[0]!.ws.close();
    await open[0]!.closed;
    let again: WsClient | undefined;
    for (let i = 0; i < 20 && !again; i++) {
      const c = await connect(t.url, { token: other.token });
      const first = await c.waitFor(() => true);
      if (first.event === 'connected') again = c;
      else await new Promise((r) => setTimeout(r, 50));
    }
    expect(again, 'a place was freed by closing a connection').toBeDefined();
    for (const c of [...open, stranger, again!]) c.ws.close();
  });

  it('closes with 4401 (after an error frame) when no auth frame arrives in time', async () => {
    const started = Date.now();
    const c = await connect(t.url);
    const closed = await c.closed;
    expect(closed.code).toBe(4401);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(c.frames).toEqual([{ event: 'error', data: { status: 401, code: 'unauthorized', message: expect.any(String) } }]);
  });

  it('closes with 4401 for a bad Authorization header, without ever sending `connected`', async () => {
    for (const token of ['garbage', 'cl_live_notarealkeyatallnotarealkey', `${user.token.slice(0, -4)}AAAA`]) {
      const c = await connect(t.url, { token });
      const closed = await c.closed;
      expect(closed.code, token).toBe(4401);
      expect(c.frames).toHaveLength(1);
      expect(c.frames[0]).toMatchObject({ event: 'error', data: { status: 401, code: 'invalid_token' } });
    }
  });

  it('closes with 4401 for a bad token in the auth frame', async () => {
    const c = await connect(t.url);
    c.send({ type: 'auth', token: 'cl_live_notarealkeyatallnotarealkey' });
    expect((await c.closed).code).toBe(4401);
    expect(c.frames).toEqual([{ event: 'error', data: { status: 401, code: 'invalid_token', message: expect.any(String) } }]);
  });

  it('tells a client with an expired session token `token_expired` (so it can refresh), by header or auth frame', async () => {
    // Signed by the server's own key ring, expired a minute ago.
    const expired = await t.server.ctx.keyRing.sign({ sub: user.user.id, sid: 'sid_expired', scope: '', env: 'production' }, -60);
    const byHeader = await connect(t.url, { token: expired });
    const byFrame = await connect(t.url);
    byFrame.send({ type: 'auth', token: expired });
    for (const c of [byHeader, byFrame]) {
      expect((await c.closed).code).toBe(4401);
      expect(c.frames).toEqual([{ event: 'error', data: { status: 401, code: 'token_expired', message: expect.any(String) } }]);
    }
  });

  it('refuses work before authentication but keeps waiting for the auth frame', async () => {
    const c = await connect(t.url);
    c.send({ type: 'generate', id: 'early', prompt: 'too soon' });
    const refused = await c.waitFor((f) => f.event === 'error');
    expect(refused).toMatchObject({ id: 'early', data: { status: 401, code: 'unauthorized' } });
    c.send({ type: 'auth', token: user.token });
    expectConnected(await c.waitFor((f) => f.event === 'connected'));
    await bye(c);
  });

  it('handles an auth frame followed at once by a generate (pipelined, no wait for `connected`)', async () => {
    const c = await connect(t.url);
    c.send({ type: 'auth', token: apiKey });
    c.send({ type: 'generate', id: 'pipelined', prompt: 'hello world script', language: 'bash', model: 'sandbox', max_tokens: 16 });
    const end = await c.waitFor((f) => f.id === 'pipelined' && (f.event === 'complete' || f.event === 'error'));
    expect(end.event, JSON.stringify(end)).toBe('complete');
    expect(c.frames[0]!.event).toBe('connected');
    await bye(c);
  });

  it('a read-only API key (read:code) may connect, but generate gets 403 insufficient_scope, then close 4403', async () => {
    const c = await connect(t.url, { token: readOnlyKey });
    await c.waitFor((f) => f.event === 'connected');
    c.send({ type: 'ping' });
    await c.waitFor((f) => f.event === 'pong');
    c.send({ type: 'generate', id: 'ro1', prompt: 'not allowed' });
    const closed = await c.closed;
    expect(closed.code).toBe(4403);
    const err = c.frames.find((f) => f.event === 'error');
    expect(err).toMatchObject({ id: 'ro1', data: { status: 403, code: 'insufficient_scope' } });
    expect(err!.data.message).toContain('write:code');
    expect(c.frames.some((f) => f.event === 'complete' || f.event === 'token')).toBe(false);
  });

  it('answers a plain HTTP GET with a 426 problem document', async () => {
    for (const path of ['/api/v1/stream', '/v1/stream']) {
      const res = await request(`${t.url}${path}`, { token: user.token, headers: { 'x-forwarded-for': nextIp() } });
      expect(res.status, path).toBe(426);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('upgrade')?.toLowerCase()).toBe('websocket');
      expect(res.body).toMatchObject({ status: 426, code: 'upgrade_required', type: expect.any(String), title: expect.any(String), request_id: expect.stringMatching(/^req_/) });
    }
  });

  it('serves the same channel at /v1/stream (header auth and auth frame)', async () => {
    const a = await connect(t.url, { token: user.token, path: '/v1/stream' });
    expectConnected(await a.waitFor((f) => f.event === 'connected'));
    await expectUsable(a, 'alias');
    await bye(a);
    const b = await connect(t.url, { path: '/v1/stream' });
    b.send({ type: 'auth', token: apiKey });
    expectConnected(await b.waitFor((f) => f.event === 'connected'));
    await bye(b);
    const late = await connect(t.url, { path: '/v1/stream' });
    expect((await late.closed).code).toBe(4401);
  });
});
