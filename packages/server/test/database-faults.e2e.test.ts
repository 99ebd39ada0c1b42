/**
 * PostgreSQL faults (issue 11, point 5): the server reaches PostgreSQL through a link this file
 * can cut. While it is cut every request answers within a second — 503 service_unavailable, or
 * a success that needed nothing from the database — /healthz stays 200 and /readyz is 503 naming
 * the database; when the link returns, service comes back by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, TEST_DATABASE_URL, type TestServer } from './helpers/test-server.js';
import { timeEach } from './helpers/timed-calls.js';
import { registerUser, request, type JsonResponse } from './helpers/http.js';
import { CuttableLink } from './helpers/tcp-cut.js';

if (!TEST_DATABASE_URL) console.log('skipping PostgreSQL fault tests: TEST_DATABASE_URL is not set');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL faults', () => {
  let link: CuttableLink;
  let t: TestServer;

  beforeAll(async () => {
    const target = new URL(TEST_DATABASE_URL!);
    link = await CuttableLink.to({ host: target.hostname, port: Number(target.port || 5432) });
    const viaLink = new URL(TEST_DATABASE_URL!);
    viaLink.hostname = '127.0.0.1';
    viaLink.port = String(link.port);
    t = await startTestServer({ dialect: 'postgres', env: { DATABASE_URL: viaLink.href } });
  }, 30_000);
  afterAll(async () => {
    await link?.restore();
    await t?.close();
    await link?.cut();
  });

  it('with the database unreachable every request answers within 1 s (503 or a success needing no database); /readyz names it; service returns by itself', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    await link.cut();

    const ip = nextIp();
    const mustFail = new Set(['readyz', 'login', 'register', 'generations']);
    const calls: Array<[string, () => Promise<JsonResponse>]> = [
      ['healthz', () => request(`${t.url}/healthz`)],
      ['readyz', () => request(`${t.url}/readyz`)],
      ['profile', () => request(`${t.url}/api/v1/user/profile`, { token: u.token })],
      ['generations', () => request(`${t.url}/api/v1/generations`, { token: u.token })],
      ['login', () => request(`${t.url}/api/v1/auth/login`, { body: { email: u.email, password: u.password }, headers: { 'x-forwarded-for': ip } })],
      ['register', () => request(`${t.url}/api/v1/auth/register`, { body: { email: `pg${Date.now()}@example.com`, password: 'correct horse battery', name: 'P' }, headers: { 'x-forwarded-for': ip } })],
    ];
    const results = await timeEach(calls);
    for (const { name, res, ms } of results) {
      expect(ms, `${name} took ${ms} ms`).toBeLessThan(1_000);
      if (name === 'healthz') { expect(res.status).toBe(200); continue; }
      if (!mustFail.has(name) && res.status === 200) continue;
      expect(res.status, `${name}: ${res.text}`).toBe(503);
      expect(res.body).toMatchObject({ code: 'service_unavailable' });
      if (name === 'readyz') expect(res.body.detail).toMatch(/database/);
    }

    await link.restore();
    const deadline = Date.now() + 5_000;
    while ((await request(`${t.url}/readyz`)).status !== 200) {
      if (Date.now() > deadline) throw new Error('not ready within 5 s of the database\'s return');
      await sleep(100);
    }
    expect((await request(`${t.url}/api/v1/generations`, { token: u.token })).status).toBe(200);
    const login = await request(`${t.url}/api/v1/auth/login`, { body: { email: u.email, password: u.password }, headers: { 'x-forwarded-for': nextIp() } });
    expect(login.status).toBe(200);
  });
});
