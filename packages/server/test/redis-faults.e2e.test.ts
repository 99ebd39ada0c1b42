/**
 * Redis faults (issue 11, points 4 and 5), on a redis-server this file starts on its own port:
 * revocations survive Redis restarting empty or being flushed (the database is their source of
 * truth); while Redis is down every request answers at once — 503 service_unavailable, or a
 * success that needs no Redis — /healthz stays 200 and /readyz is 503 naming Redis; service
 * comes back by itself when Redis returns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startTestServer, nextIp, uniqueName, TEST_DATABASE_URL, type TestServer } from './helpers/test-server.js';
import { timeEach } from './helpers/timed-calls.js';
import { spawnServer, type SpawnedServer } from './helpers/spawn-server.js';
import { dropPgSchema } from './helpers/pg-schema.js';
import { registerUser, request, type JsonResponse } from './helpers/http.js';
import { HAVE_REDIS_SERVER, PrivateRedis } from './helpers/private-redis.js';

if (!HAVE_REDIS_SERVER) console.log('skipping Redis fault tests: no redis-server on PATH');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!HAVE_REDIS_SERVER)('Redis faults', () => {
  let redis: PrivateRedis;
  let t: TestServer;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    t = await startTestServer({ env: { REDIS_URL: redis.url } });
  }, 30_000);
  afterAll(async () => {
    await t?.close();
    await redis?.stop();
  });

  const verify = (token: string) => request(`${t.url}/api/v1/auth/verify`, { token, headers: { 'x-forwarded-for': nextIp() } });

  /** Polls until `ok` holds, for at most `ms` (Redis's return must be noticed without anyone's help). */
  async function until(ok: () => Promise<boolean>, ms: number) {
    const deadline = Date.now() + ms;
    while (!(await ok())) {
      if (Date.now() > deadline) throw new Error(`not recovered within ${ms} ms`);
      await sleep(100);
    }
  }
  const ready = async () => (await request(`${t.url}/readyz`)).status === 200;

  it('a logged-out token stays refused after Redis restarts empty, and after a FLUSHDB', async () => {
    const out = await registerUser(t.url, { ip: nextIp() });
    const live = await registerUser(t.url, { ip: nextIp() });
    expect((await request(`${t.url}/api/v1/auth/logout`, { method: 'POST', token: out.token })).status).toBe(200);
    expect((await verify(out.token)).status).toBe(401);

    await redis.stop();
    await redis.start();
    await until(ready, 5_000);
    const after = await verify(out.token);
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('invalid_token');
    expect((await verify(live.token)).status).toBe(200);

    const direct = new Redis(redis.url);
    try { await direct.flushall(); } finally { await direct.quit(); }
    expect((await verify(out.token)).status).toBe(401);
    expect((await verify(live.token)).status).toBe(200);
  });

  async function expectFastFailures(u: Awaited<ReturnType<typeof registerUser>>, key: string) {
    const ip = nextIp();
    const calls: Array<[string, () => Promise<JsonResponse>]> = [
      ['healthz', () => request(`${t.url}/healthz`)],
      ['readyz', () => request(`${t.url}/readyz`)],
      ['profile (session)', () => request(`${t.url}/api/v1/user/profile`, { token: u.token })],
      ['verify (api key)', () => request(`${t.url}/api/v1/auth/verify`, { token: key })],
      ['login', () => request(`${t.url}/api/v1/auth/login`, { body: { email: u.email, password: u.password }, headers: { 'x-forwarded-for': ip } })],
      ['register', () => request(`${t.url}/api/v1/auth/register`, { body: { email: `x${Date.now()}@example.com`, password: 'correct horse battery', name: 'X' }, headers: { 'x-forwarded-for': ip } })],
      ['generate', () => request(`${t.url}/api/v1/generate`, { token: key, body: { prompt: 'hello world script', language: 'bash', model: 'sandbox' } })],
      ['anonymous 404', () => request(`${t.url}/api/v1/nope`)],
    ];
    // Each alone, then all at once.
    const results = await timeEach(calls);
    for (const { name, res, ms } of results) {
      expect(ms, `${name} took ${ms} ms`).toBeLessThan(1_000);
      if (name === 'healthz') {
        expect(res.status).toBe(200);
        continue;
      }
      expect(res.status, `${name}: ${res.text}`).toBe(503);
      expect(res.body).toMatchObject({ code: 'service_unavailable' });
      if (name === 'readyz') expect(res.body.detail).toMatch(/redis/i);
    }
  }

  async function expectRecovery(u: Awaited<ReturnType<typeof registerUser>>, key: string) {
    const back = Date.now();
    await until(async () => (await request(`${t.url}/api/v1/user/profile`, { token: u.token })).status === 200, 5_000);
    await until(ready, Math.max(0, 5_000 - (Date.now() - back)));
    expect((await request(`${t.url}/api/v1/auth/verify`, { token: key })).status).toBe(200);
    const login = await request(`${t.url}/api/v1/auth/login`, { body: { email: u.email, password: u.password }, headers: { 'x-forwarded-for': nextIp() } });
    expect(login.status).toBe(200);
    expect((await verify(login.body.token)).status).toBe(200);
  }

  const userWithKey = async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    const key = (await request(`${t.url}/api/v1/api-keys`, { token: u.token, body: { name: 'faults' } })).body.key as string;
    return { u, key };
  };

  it('with Redis down every request answers within 1 s; /healthz 200, /readyz 503 naming redis; all is well within 5 s of its return', async () => {
    const { u, key } = await userWithKey();
    await redis.stop();
    await expectFastFailures(u, key);
    await redis.start();
    await expectRecovery(u, key);
  });

  it('with Redis hung (stopped, its connections open) every request likewise answers within 1 s, and service returns when it resumes', async () => {
    const { u, key } = await userWithKey();
    redis.pause();
    try {
      await expectFastFailures(u, key);
    } finally {
      redis.resume();
    }
    await expectRecovery(u, key);
  });
});

describe.skipIf(!HAVE_REDIS_SERVER || !TEST_DATABASE_URL)('Redis restarting empty under two server processes on PostgreSQL', () => {
  const schema = uniqueName('rflt');
  let redis: PrivateRedis;
  let a: SpawnedServer;
  let b: SpawnedServer;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    const env = { DATABASE_URL: TEST_DATABASE_URL!, CODELOOM_DATABASE_SCHEMA: schema, REDIS_URL: redis.url };
    a = await spawnServer(env);
    b = await spawnServer(env);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
    await dropPgSchema(schema);
  });

  it('a session logged out on A, and an API key revoked on B, stay refused on both after Redis restarts empty', async () => {
    const verify = (server: SpawnedServer, token: string) => request(`${server.url}/api/v1/auth/verify`, { token, headers: { 'x-forwarded-for': nextIp() } });
    const out = await registerUser(a.url, { ip: nextIp() });
    const keeper = await registerUser(a.url, { ip: nextIp() });
    const key = (await request(`${b.url}/api/v1/api-keys`, { token: keeper.token, body: { name: 'gone' } })).body;
    expect((await verify(a, key.key)).status).toBe(200); // now cached on A
    expect((await request(`${a.url}/api/v1/auth/logout`, { method: 'POST', token: out.token })).status).toBe(200);
    expect((await request(`${b.url}/api/v1/api-keys/${key.id}`, { method: 'DELETE', token: keeper.token })).status).toBe(200);

    await redis.stop();
    await redis.start();
    for (const server of [a, b]) {
      const deadline = Date.now() + 5_000;
      while ((await request(`${server.url}/readyz`)).status !== 200) {
        if (Date.now() > deadline) throw new Error('not ready within 5 s of Redis\'s return');
        await sleep(100);
      }
    }
    for (const server of [a, b]) {
      expect((await verify(server, out.token)).status).toBe(401);
      expect((await verify(server, key.key)).status).toBe(401);
      expect((await verify(server, keeper.token)).status).toBe(200);
    }
  });
});
