/**
 * A credential is valid only in the environment it was issued for (issue 11, point 7), through
 * every way of choosing one: the X-Environment header, `?environment=` on the WebSocket URL and
 * the auth frame's `environment`. A sandbox credential (a test key, or a session started with
 * X-Environment: sandbox) asking for production is refused with 403 forbidden — on a socket as an
 * error frame and close 4401 — while a production credential may still choose the sandbox.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { bye, openWs, type WsClient } from './helpers/ws-client.js';

const SANDBOX = { 'x-environment': 'sandbox' };
const PRODUCTION = { 'x-environment': 'production' };

describe('environments are enforced for every credential and every way of choosing one', () => {
  let t: TestServer;
  let user: Awaited<ReturnType<typeof registerUser>>;
  let sandboxSession: string;
  let testKey: string;
  let liveKey: string;

  beforeAll(async () => {
    t = await startTestServer();
    user = await registerUser(t.url, { ip: nextIp() });
    const login = await request(`${t.url}/api/v1/auth/login`, { body: { email: user.email, password: user.password }, headers: { ...SANDBOX, 'x-forwarded-for': nextIp() } });
    expect(login.status).toBe(200);
    sandboxSession = login.body.token;
    testKey = (await request(`${t.url}/api/v1/api-keys`, { token: user.token, body: { name: 't', environment: 'sandbox' } })).body.key;
    liveKey = (await request(`${t.url}/api/v1/api-keys`, { token: user.token, body: { name: 'l' } })).body.key;
    expect(testKey).toMatch(/^cl_test_/);
    expect(liveKey).toMatch(/^cl_live_/);
  });
  afterAll(async () => { await t.close(); });

  const verify = (token: string, headers: Record<string, string> = {}) => request(`${t.url}/api/v1/auth/verify`, { token, headers });

  it('a session started in the sandbox stays there: no header means sandbox, production is 403', async () => {
    expect((await verify(sandboxSession)).body.credential.environment).toBe('sandbox');
    expect((await verify(sandboxSession, SANDBOX)).body.credential.environment).toBe('sandbox');
    const refused = await verify(sandboxSession, PRODUCTION);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('forbidden');
    // Its refresh keeps the environment.
    const login = await request(`${t.url}/api/v1/auth/login`, { body: { email: user.email, password: user.password }, headers: { ...SANDBOX, 'x-forwarded-for': nextIp() } });
    const refreshed = await request(`${t.url}/api/v1/auth/refresh`, { body: { refreshToken: login.body.refreshToken } });
    expect((await verify(refreshed.body.token, PRODUCTION)).status).toBe(403);
    expect((await verify(refreshed.body.token)).body.credential.environment).toBe('sandbox');
  });

  it('a production session and a live key may still choose the sandbox', async () => {
    expect((await verify(user.token, SANDBOX)).body.credential.environment).toBe('sandbox');
    expect((await verify(liveKey, SANDBOX)).body.credential.environment).toBe('sandbox');
    expect((await verify(user.token)).body.credential.environment).toBe('production');
  });

  /** Opens a socket and waits for its first frame; a refusal also waits for the close. */
  async function firstFrame(opts: { token?: string; path?: string; headers?: Record<string, string> }, auth?: Record<string, unknown>) {
    const c = await openWs(t.url, { timeoutMs: 5_000, ...opts });
    if (auth) c.send({ type: 'auth', ...auth });
    const frame = await c.waitFor(() => true);
    return { c, frame };
  }
  async function expectRefused(c: WsClient, frame: { event: string; data?: any }) {
    expect(frame).toMatchObject({ event: 'error', data: { status: 403, code: 'forbidden' } });
    expect((await c.closed).code).toBe(4401);
  }

  it('on the WebSocket, a test key or sandbox session asking for production is refused the same way, by URL, header or auth frame', async () => {
    const cases: Array<[string, Parameters<typeof firstFrame>]> = [
      ['test key, ?environment=production', [{ token: testKey, path: '/api/v1/stream?environment=production' }]],
      ['test key, X-Environment: production', [{ token: testKey, headers: PRODUCTION }]],
      ['test key, auth frame environment', [{}, { token: testKey, environment: 'production' }]],
      ['test key, auth frame on a ?environment=production URL', [{ path: '/api/v1/stream?environment=production' }, { token: testKey }]],
      ['sandbox session, ?environment=production', [{ token: sandboxSession, path: '/api/v1/stream?environment=production' }]],
      ['sandbox session, auth frame environment', [{}, { token: sandboxSession, environment: 'production' }]],
    ];
    for (const [name, args] of cases) {
      const { c, frame } = await firstFrame(...args);
      try { await expectRefused(c, frame); } catch (error) { throw new Error(`${name}: ${(error as Error).message}`); }
    }
  });

  it('on the WebSocket, a live key with ?environment=sandbox works in the sandbox', async () => {
    const { c, frame } = await firstFrame({ token: liveKey, path: '/api/v1/stream?environment=sandbox' });
    expect(frame.event).toBe('connected');
    c.send({ type: 'generate', id: 'g', prompt: 'hello world script', language: 'bash', model: 'sandbox', max_tokens: 16 });
    const { end } = await c.result('g');
    expect(end.event).toBe('complete');
    const inSandbox = await request(`${t.url}/api/v1/generations/${end.data.id}`, { token: user.token, headers: SANDBOX });
    expect(inSandbox.status).toBe(200);
    expect((await request(`${t.url}/api/v1/generations/${end.data.id}`, { token: user.token })).status).toBe(404);
    await bye(c);
  });
});
