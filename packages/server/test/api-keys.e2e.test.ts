import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request, type JsonResponse } from './helpers/http.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function expectProblem(res: JsonResponse, status: number, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code });
}

describe('API keys over HTTP', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t.close(); });

  const keys = (token: string, init: { method?: string; body?: unknown; query?: string; id?: string } = {}) =>
    request(`${t.url}/api/v1/api-keys${init.id ? `/${init.id}` : ''}${init.query ?? ''}`, { token, method: init.method, body: init.body });
  const verify = (token: string) => request(`${t.url}/api/v1/auth/verify`, { token });
  const newUser = () => registerUser(t.url, { ip: nextIp() });

  it('creates a key (201) whose cl_live_ secret is shown once and works as a credential', async () => {
    const u = await newUser();
    const res = await keys(u.token, { body: { name: 'ci' } });
    expect(res.status).toBe(201);
    expect(res.body.key).toMatch(/^cl_live_[A-Za-z0-9_-]{20,}$/);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^key_/), name: 'ci', prefix: res.body.key.slice(0, res.body.prefix.length),
      scopes: ['read:code', 'write:code'], environment: 'production', last_used_at: null, expires_at: null,
    });
    expect(res.body.created_at).toMatch(ISO);
    expect(res.body.prefix.length).toBeLessThan(res.body.key.length);
    const v = await verify(res.body.key);
    expect(v.status).toBe(200);
    expect(v.body.user.id).toBe(u.user.id);
  });

  it('lists keys with prefix, name, scopes and times, never the secret; last_used_at is filled after use', async () => {
    const u = await newUser();
    const created = await keys(u.token, { body: { name: 'deploy bot', scopes: ['read:code'] } });
    const before = await keys(u.token);
    expect(before.status).toBe(200);
    expect(before.text).not.toContain(created.body.key);
    expect(before.text).not.toContain(created.body.key.slice(created.body.prefix.length));
    expect(before.body.pagination).toEqual({ page: 1, limit: 20, total: 1, total_pages: 1 });
    const [item] = before.body.data;
    expect(Object.keys(item).sort()).toEqual(['created_at', 'environment', 'expires_at', 'id', 'last_used_at', 'limits', 'name', 'prefix', 'scopes']);
    expect(item).toMatchObject({ id: created.body.id, name: 'deploy bot', prefix: created.body.prefix, scopes: ['read:code'], created_at: created.body.created_at, last_used_at: null, expires_at: null });

    expect((await verify(created.body.key)).status).toBe(200);
    let after = await keys(u.token);
    for (let i = 0; i < 20 && !after.body.data[0].last_used_at; i++) { await sleep(25); after = await keys(u.token); }
    expect(after.body.data[0].last_used_at).toMatch(ISO);
    expect(Date.parse(after.body.data[0].last_used_at)).toBeGreaterThanOrEqual(Date.parse(created.body.created_at));
    expect(after.text).not.toContain(created.body.key);
  });

  it('revokes a key (200) and the key is refused at once; it leaves the list; revoking again is 404', async () => {
    const u = await newUser();
    const created = await keys(u.token, { body: { name: 'temp' } });
    expect((await verify(created.body.key)).status).toBe(200);
    const del = await keys(u.token, { method: 'DELETE', id: created.body.id });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true });
    expectProblem(await verify(created.body.key), 401, 'invalid_token');
    expect((await keys(u.token)).body.data).toEqual([]);
    expectProblem(await keys(u.token, { method: 'DELETE', id: created.body.id }), 404, 'not_found');
  });

  it('another account cannot revoke or see a key: 404, and the key keeps working', async () => {
    const owner = await newUser();
    const other = await newUser();
    const created = await keys(owner.token, { body: { name: 'mine' } });
    expectProblem(await keys(other.token, { method: 'DELETE', id: created.body.id }), 404, 'not_found');
    expect((await keys(other.token)).body.data).toEqual([]);
    expect((await verify(created.body.key)).status).toBe(200);
  });

  it('an API key cannot create, list or revoke keys (403 insufficient_scope)', async () => {
    const u = await newUser();
    const created = await keys(u.token, { body: { name: 'no-admin' } });
    const key = created.body.key as string;
    expectProblem(await keys(key, { body: { name: 'child' } }), 403, 'insufficient_scope');
    expectProblem(await keys(key), 403, 'insufficient_scope');
    expectProblem(await keys(key, { method: 'DELETE', id: created.body.id }), 403, 'insufficient_scope');
    expect((await verify(key)).status).toBe(200);
    expect((await keys(u.token)).body.pagination.total).toBe(1);
  });

  it('a key carries only the scopes it was given', async () => {
    const u = await newUser();
    const created = await keys(u.token, { body: { name: 'reader', scopes: ['read:code'] } });
    expect(created.body.scopes).toEqual(['read:code']);
    const v = await verify(created.body.key);
    expect(v.body.credential).toEqual({ type: 'api_key', scopes: ['read:code'], environment: 'production' });
    const profile = await request(`${t.url}/api/v1/user/profile`, { token: created.body.key });
    expect(profile.body.permissions).toEqual(['read:code']);
  });

  it('refuses deploy:apps on the free plan with 403 naming it', async () => {
    const u = await newUser();
    const res = await keys(u.token, { body: { name: 'deployer', scopes: ['read:code', 'deploy:apps'] } });
    expectProblem(res, 403, 'insufficient_scope');
    expect(res.body.detail).toContain('deploy:apps');
    expect((await keys(u.token)).body.data).toEqual([]);
  });

  it('refuses an unknown scope with 400 listing the valid ones', async () => {
    const u = await newUser();
    const res = await keys(u.token, { body: { name: 'bad', scopes: ['admin:all'] } });
    expectProblem(res, 400, 'validation_failed');
    const err = res.body.errors.find((e: { path: string }) => e.path.startsWith('/scopes'));
    expect(err).toBeDefined();
    for (const s of ['read:code', 'write:code', 'deploy:apps']) expect(err.message).toContain(s);
  });

  it('refuses a missing name and an expires_at in the past with 400', async () => {
    const u = await newUser();
    const noName = await keys(u.token, { body: {} });
    expectProblem(noName, 400, 'validation_failed');
    expect(noName.body.errors.map((e: { path: string }) => e.path)).toContain('/name');
    const past = await keys(u.token, { body: { name: 'old', expires_at: new Date(Date.now() - 60_000).toISOString() } });
    expectProblem(past, 400, 'validation_failed');
    expect(past.body.errors.map((e: { path: string }) => e.path)).toContain('/expires_at');
  });

  it('a key past its expires_at is refused with 401', async () => {
    const u = await newUser();
    const expiresAt = new Date(Date.now() + 2000).toISOString();
    const created = await keys(u.token, { body: { name: 'short', expires_at: expiresAt } });
    expect(created.status).toBe(201);
    expect(Date.parse(created.body.expires_at)).toBe(Date.parse(expiresAt));
    expect((await verify(created.body.key)).status).toBe(200);
    await sleep(Math.max(0, Date.parse(expiresAt) - Date.now()) + 100);
    expectProblem(await verify(created.body.key), 401, 'invalid_token');
  });

  it('pages the list newest first', async () => {
    const u = await newUser();
    for (const name of ['k1', 'k2', 'k3']) {
      expect((await keys(u.token, { body: { name } })).status).toBe(201);
      await sleep(5);
    }
    const p1 = await keys(u.token, { query: '?page=1&limit=2' });
    expect(p1.body.data.map((k: { name: string }) => k.name)).toEqual(['k3', 'k2']);
    expect(p1.body.pagination).toEqual({ page: 1, limit: 2, total: 3, total_pages: 2 });
    const p2 = await keys(u.token, { query: '?page=2&limit=2' });
    expect(p2.body.data.map((k: { name: string }) => k.name)).toEqual(['k1']);
    expect(p2.body.pagination).toEqual({ page: 2, limit: 2, total: 3, total_pages: 2 });
    const p3 = await keys(u.token, { query: '?page=3&limit=2' });
    expect(p3.status).toBe(200);
    expect(p3.body.data).toEqual([]);
  });

  it.each([['page=0', 'page'], ['limit=0', 'limit'], ['limit=101', 'limit'], ['page=abc', 'page'], ['limit=2.5', 'limit']])(
    'refuses ?%s with 400 validation_failed', async (query, field) => {
      const u = await newUser();
      const res = await keys(u.token, { query: `?${query}` });
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.errors.some((e: { path: string }) => e.path.includes(field))).toBe(true);
    });
});
