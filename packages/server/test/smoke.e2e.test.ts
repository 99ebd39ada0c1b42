import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';

describe('smoke: register → profile → key → profile with key', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t.close(); });

  it('walks the README quick start', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    const profile = await request(`${t.url}/v1/user/profile`, { token: u.token });
    expect(profile.status).toBe(200);
    expect(profile.body).toMatchObject({ id: u.user.id, organization: { plan: 'free' }, permissions: ['read:code', 'write:code'], rate_limits: { requests_per_minute: 100, requests_per_hour: 1000, tokens_per_minute: 20000 } });
    const key = await request(`${t.url}/api/v1/api-keys`, { token: u.token, body: { name: 'ci' } });
    expect(key.status).toBe(201);
    expect(key.body.key).toMatch(/^cl_live_/);
    const viaKey = await request(`${t.url}/api/v1/user/profile`, { token: key.body.key });
    expect(viaKey.status).toBe(200);
    expect(viaKey.body.id).toBe(u.user.id);
  });
});
