import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';

const FREE_LIMITS = { requests_per_minute: 100, requests_per_hour: 1000, tokens_per_minute: 20000 };
const ENTERPRISE_LIMITS = { requests_per_minute: null, requests_per_hour: 100000, tokens_per_minute: 2000000 };
/** Accounts are cached up to 1 s per instance; a plan change made elsewhere is seen after that. */
const ACCOUNT_CACHE_MS = 1100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('user profile over HTTP', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t.close(); });

  const profile = (token: string, prefix = '/v1') => request(`${t.url}${prefix}/user/profile`, { token });
  const newUser = (name?: string) => registerUser(t.url, { ip: nextIp(), ...(name ? { name } : {}) });
  const setPlan = (email: string, plan: 'free' | 'pro' | 'enterprise') => t.server.ctx.store.accounts.setPlanByEmail(email.toLowerCase(), plan);

  it('has the §5 shape for a session token', async () => {
    const u = await newUser('Grace');
    const res = await profile(u.token);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({
      id: u.user.id, email: u.email, name: 'Grace',
      organization: { id: expect.stringMatching(/^org_/), name: expect.any(String), plan: 'free' },
      permissions: ['read:code', 'write:code'],
      rate_limits: FREE_LIMITS,
    });
    expect(Object.keys(res.body.organization).sort()).toEqual(['id', 'name', 'plan']);
    expect(res.body.rate_limits).toEqual(FREE_LIMITS);
    expect(res.text).not.toMatch(/password|hash/i);
    expect((await profile(u.token, '/api/v1')).body).toEqual(res.body);
  });

  it('has the same shape for an API key, with the key\'s permissions', async () => {
    const u = await newUser();
    const bySession = await profile(u.token);
    const full = await request(`${t.url}/api/v1/api-keys`, { token: u.token, body: { name: 'full' } });
    const viaKey = await profile(full.body.key);
    expect(viaKey.status).toBe(200);
    expect(viaKey.body).toEqual(bySession.body);
    const reader = await request(`${t.url}/api/v1/api-keys`, { token: u.token, body: { name: 'reader', scopes: ['read:code'] } });
    const viaReader = await profile(reader.body.key);
    expect(viaReader.body).toEqual({ ...bySession.body, permissions: ['read:code'] });
  });

  it('reports the free plan limits, and they are the limits enforced in X-RateLimit-Limit', async () => {
    const u = await newUser();
    const res = await profile(u.token);
    expect(res.body.rate_limits).toEqual(FREE_LIMITS);
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
    expect(Number(res.headers.get('x-ratelimit-remaining'))).toBe(99);
  });

  it('after a change to enterprise, shows the enterprise plan and limits', async () => {
    const u = await newUser();
    expect((await profile(u.token)).body.organization.plan).toBe('free');
    expect(await setPlan(u.email, 'enterprise')).toBe(true);
    await sleep(ACCOUNT_CACHE_MS);
    const res = await profile(u.token);
    expect(res.body.organization.plan).toBe('enterprise');
    expect(res.body.rate_limits).toEqual(ENTERPRISE_LIMITS);
    // Per-minute is unlimited on enterprise: the hourly window is the one reported.
    expect(res.headers.get('x-ratelimit-limit')).toBe('100000');
    const fresh = await request(`${t.url}/api/v1/auth/login`, { body: { email: u.email, password: u.password }, headers: { 'x-forwarded-for': nextIp() } });
    expect(fresh.body.user.plan).toBe('enterprise');
    const viaFresh = await profile(fresh.body.token);
    expect(viaFresh.body.permissions).toEqual(['read:code', 'write:code', 'deploy:apps']);
    expect(viaFresh.body.rate_limits).toEqual(ENTERPRISE_LIMITS);
  });

  it('after a change to enterprise, the session already signed in is granted deploy:apps too', async () => {
    const u = await newUser();
    expect((await profile(u.token)).body.permissions).toEqual(['read:code', 'write:code']);
    await setPlan(u.email, 'enterprise');
    await sleep(ACCOUNT_CACHE_MS);
    const res = await profile(u.token);
    expect(res.body.organization.plan).toBe('enterprise');
    expect(res.body.permissions).toEqual(['read:code', 'write:code', 'deploy:apps']);
  });

  it('an enterprise account can mint a deploy:apps key; a downgrade narrows it at once', async () => {
    const u = await newUser();
    await setPlan(u.email, 'enterprise');
    const login = await request(`${t.url}/api/v1/auth/login`, { body: { email: u.email, password: u.password }, headers: { 'x-forwarded-for': nextIp() } });
    const key = await request(`${t.url}/api/v1/api-keys`, { token: login.body.token, body: { name: 'deployer', scopes: ['deploy:apps'] } });
    expect(key.status).toBe(201);
    expect((await profile(key.body.key)).body.permissions).toEqual(['deploy:apps']);
    await setPlan(u.email, 'free');
    await sleep(ACCOUNT_CACHE_MS);
    const after = await profile(key.body.key);
    expect(after.body.organization.plan).toBe('free');
    expect(after.body.permissions).toEqual([]);
    expect(after.body.rate_limits).toEqual(FREE_LIMITS);
  });

  it('never shows another account\'s data', async () => {
    const a = await newUser('Alice');
    const b = await newUser('Bob');
    const keyA = await request(`${t.url}/api/v1/api-keys`, { token: a.token, body: { name: 'alice-key' } });
    const pa = await profile(a.token);
    const pb = await profile(b.token);
    expect(pa.body.id).toBe(a.user.id);
    expect(pb.body.id).toBe(b.user.id);
    expect(pb.body.organization.id).not.toBe(pa.body.organization.id);
    for (const leak of [a.user.id, a.email, pa.body.organization.id, 'Alice']) expect(pb.text).not.toContain(leak);
    const listB = await request(`${t.url}/api/v1/api-keys`, { token: b.token });
    expect(listB.body.data).toEqual([]);
    expect(listB.text).not.toContain('alice-key');
    expect((await profile(keyA.body.key)).body.id).toBe(a.user.id);
  });
});
