/**
 * Credentials stay live on open WebSockets (issue 11, points 3 and 6): a revocation made through
 * one instance closes the sockets that hold the credential on another within a second, with
 * 4401, and aborts what they were generating; an access token's expiry closes its socket with
 * token_expired unless a fresh auth frame came first; a frame sent after a revocation starts
 * nothing. Three server processes on one PostgreSQL and one Redis; A and B differ only in PORT
 * and set no issuer, so each accepts the other's tokens. C signs two-second access tokens.
 */
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from './helpers/spawn-server.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL, nextIp, uniqueName } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { bye, connect, type Frame, type WsClient } from './helpers/ws-client.js';
import { dropPgSchema } from './helpers/pg-schema.js';
import { startOpenAIFake, type FakeVendor } from './fakes/openai-fake.js';

const enabled = Boolean(TEST_DATABASE_URL && TEST_REDIS_URL);
if (!enabled) console.log('skipping live-credential tests: they need TEST_DATABASE_URL and TEST_REDIS_URL');

const SLOW_MODEL = 'slow-model';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address() as AddressInfo; s.close(() => resolve(port)); });
  });
}

/** The socket's close, which must come within `ms` of now (the guarantee under test). */
function closedWithin(c: WsClient, ms: number): Promise<{ code: number; reason: string }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`socket still open ${ms} ms later; frames: ${JSON.stringify(c.frames.slice(-3))}`)), ms); });
  return Promise.race([c.closed, late]).finally(() => clearTimeout(timer));
}

const connectionError = (c: WsClient): Frame | undefined => c.frames.find((f) => f.event === 'error' && f.id === undefined);

describe.skipIf(!enabled)('credentials stay live on open sockets, across instances', () => {
  const schema = uniqueName('live');
  let fake: FakeVendor;
  let a: SpawnedServer;
  let b: SpawnedServer;
  let c: SpawnedServer;

  beforeAll(async () => {
    // A model that streams for about ten seconds: long enough to be running when the credential goes.
    fake = await startOpenAIFake({ script: { reply: 'x', chunks: Array.from({ length: 200 }, (_, i) => `w${i} `), chunkDelayMs: 50 } });
    const env = {
      DATABASE_URL: TEST_DATABASE_URL!, CODELOOM_DATABASE_SCHEMA: schema, REDIS_URL: TEST_REDIS_URL!,
      OPENAI_BASE_URL: `${fake.url}/v1`, CODELOOM_OPENAI_MODELS: SLOW_MODEL,
      // No issuer setting: the default must not depend on HOST or PORT.
      CODELOOM_ISSUER: '',
    };
    a = await spawnServer({ ...env, PORT: String(await freePort()) });
    [b, c] = await Promise.all([
      spawnServer({ ...env, PORT: String(await freePort()) }),
      spawnServer({ ...env, PORT: '0', CODELOOM_ACCESS_TOKEN_TTL: '2' }),
    ]);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), c?.stop()]);
    await fake?.close();
    await dropPgSchema(schema);
  });

  /** A socket on B running a slow generation that has started streaming. */
  async function generatingOn(server: SpawnedServer, credential: string, id = 'long') {
    const ws = await connect(server.url, credential);
    ws.send({ type: 'generate', id, prompt: 'write a long program', language: 'python', model: SLOW_MODEL });
    await ws.waitFor((f) => f.id === id && f.event === 'token');
    return ws;
  }

  /** The socket closed with 4401 after an error frame of `code`; its generation never completed and its model call was aborted. */
  async function expectCutOff(ws: WsClient, closed: { code: number; reason: string }, code: string, abortsBefore: number) {
    expect(closed).toEqual({ code: 4401, reason: code === 'token_expired' ? 'token_expired' : 'credential_revoked' });
    expect(connectionError(ws)).toMatchObject({ event: 'error', data: { status: 401, code } });
    await fake.waitForAborts(abortsBefore + 1, 5_000);
    expect(ws.frames.filter((f) => f.event === 'complete')).toEqual([]);
  }

  it('instances that differ only in PORT accept each other\'s tokens (the issuer does not default to HOST:PORT)', async () => {
    expect(new URL(a.url).port).not.toBe(new URL(b.url).port);
    const u = await registerUser(a.url, { ip: nextIp() });
    const onB = await request(`${b.url}/api/v1/auth/verify`, { token: u.token, headers: { 'x-forwarded-for': nextIp() } });
    expect(onB.status, onB.text).toBe(200);
    const claims = JSON.parse(Buffer.from(u.token.split('.')[1]!, 'base64url').toString('utf8'));
    expect(claims.iss).toBe('codeloom');
  });

  it('revoking an API key through A closes its socket on B within 1 s (4401) and aborts its generation', async () => {
    const u = await registerUser(a.url, { ip: nextIp() });
    const key = (await request(`${a.url}/api/v1/api-keys`, { token: u.token, body: { name: 'live' } })).body;
    const ws = await generatingOn(b, key.key);
    const aborts = fake.aborts;
    expect((await request(`${a.url}/api/v1/api-keys/${key.id}`, { method: 'DELETE', token: u.token })).status).toBe(200);
    await expectCutOff(ws, await closedWithin(ws, 1_000), 'invalid_token', aborts);
    const history = await request(`${a.url}/api/v1/generations`, { token: u.token });
    expect(history.body.data ?? history.body).toEqual([]);
  });

  it('a logout through A closes the session\'s socket on B within 1 s (4401)', async () => {
    const u = await registerUser(a.url, { ip: nextIp() });
    const ws = await generatingOn(b, u.token);
    const aborts = fake.aborts;
    expect((await request(`${a.url}/api/v1/auth/logout`, { method: 'POST', token: u.token })).status).toBe(200);
    await expectCutOff(ws, await closedWithin(ws, 1_000), 'invalid_token', aborts);
  });

  it('a reused refresh token revokes the session, and its socket on B closes within 1 s (4401)', async () => {
    const u = await registerUser(a.url, { ip: nextIp() });
    const ws = await connect(b.url, u.token);
    const refresh = () => request(`${a.url}/api/v1/auth/refresh`, { body: { refreshToken: u.refreshToken } });
    expect((await refresh()).status).toBe(200);
    expect((await refresh()).status).toBe(401);
    expect(await closedWithin(ws, 1_000)).toEqual({ code: 4401, reason: 'credential_revoked' });
    expect(connectionError(ws)).toMatchObject({ data: { code: 'invalid_token' } });
  });

  it('a frame sent after the revocation starts nothing', async () => {
    const u = await registerUser(a.url, { ip: nextIp() });
    const key = (await request(`${a.url}/api/v1/api-keys`, { token: u.token, body: { name: 'late' } })).body;
    const ws = await connect(b.url, key.key);
    expect((await request(`${a.url}/api/v1/api-keys/${key.id}`, { method: 'DELETE', token: u.token })).status).toBe(200);
    // Sent the moment the revocation is committed, racing the broadcast to B.
    if (ws.ws.readyState === ws.ws.OPEN) ws.send({ type: 'generate', id: 'late', prompt: 'hello world script', language: 'bash', model: 'sandbox' });
    expect((await closedWithin(ws, 1_000)).code).toBe(4401);
    expect(ws.frames.filter((f) => f.id === 'late' && f.event !== 'error')).toEqual([]);
    const history = await request(`${a.url}/api/v1/generations`, { token: u.token });
    expect(history.body.data ?? history.body).toEqual([]);
  });

  it('an access token\'s expiry closes its socket with token_expired', async () => {
    const u = await registerUser(c.url, { ip: nextIp() });
    const ws = await generatingOn(b, u.token);
    const aborts = fake.aborts;
    const closed = await closedWithin(ws, 4_000);
    await expectCutOff(ws, closed, 'token_expired', aborts);
  });

  it('a fresh auth frame before expiry keeps the socket open past the first token\'s lifetime', async () => {
    const u = await registerUser(c.url, { ip: nextIp() });
    const ws = await connect(b.url, u.token);
    const fresh = await request(`${a.url}/api/v1/auth/login`, { body: { email: u.email, password: u.password }, headers: { 'x-forwarded-for': nextIp() } });
    expect(fresh.status).toBe(200);
    const mark = ws.frames.length;
    ws.send({ type: 'auth', token: fresh.body.token });
    expect((await ws.waitFor((f) => f.event === 'connected', mark)).data.user_id).toBe(u.user.id);
    await sleep(2_500);
    expect(ws.ws.readyState).toBe(ws.ws.OPEN);
    ws.send({ type: 'generate', id: 'after', prompt: 'hello world script', language: 'bash', model: 'sandbox', max_tokens: 16 });
    expect((await ws.result('after')).end.event).toBe('complete');
    await bye(ws);
  });
});
