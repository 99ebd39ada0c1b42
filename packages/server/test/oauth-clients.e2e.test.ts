import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request, type JsonResponse } from './helpers/http.js';
import { CALLBACK } from './helpers/oauth.js';

function expectProblem(res: JsonResponse, status: number, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code });
}

describe('OAuth client registration over HTTP', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t?.close(); });

  const clients = (token: string, init: { method?: string; body?: unknown; id?: string; query?: string } = {}) =>
    request(`${t.url}/api/v1/oauth/clients${init.id ? `/${init.id}` : ''}${init.query ?? ''}`, { token, method: init.method, body: init.body });
  const newUser = () => registerUser(t.url, { ip: nextIp() });

  it('registers a confidential client (201) whose clo_cs_ secret is shown once and stored only hashed', async () => {
    const u = await newUser();
    const res = await clients(u.token, { body: { name: 'Acme Docs', redirect_uris: [CALLBACK, 'https://docs.acme.example/oauth/callback?x=1'] } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^cli_/), name: 'Acme Docs', type: 'confidential',
      redirect_uris: [CALLBACK, 'https://docs.acme.example/oauth/callback?x=1'], scopes: ['read:code', 'write:code'],
      client_secret: expect.stringMatching(/^clo_cs_[A-Za-z0-9_-]{43}$/),
    });
    expect(res.body.client_id).toBe(res.body.id);
    const row = await t.server.ctx.store.handle.db.selectFrom('oauth_clients').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(res.body.client_secret);

    const list = await clients(u.token);
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(res.body.client_secret);
    expect(list.body.pagination).toEqual({ page: 1, limit: 20, total: 1, total_pages: 1 });
    expect(Object.keys(list.body.data[0]).sort()).toEqual(['client_id', 'created_at', 'id', 'name', 'redirect_uris', 'scopes', 'type']);
    const one = await clients(u.token, { id: res.body.id });
    expect(one.body).toEqual(list.body.data[0]);
  });

  it('registers a public client without a secret, and accepts http only on loopback hosts', async () => {
    const u = await newUser();
    const res = await clients(u.token, { body: { name: 'CLI', type: 'public', scopes: ['read:code'], redirect_uris: ['http://127.0.0.1:8765/cb', 'http://[::1]:8765/cb', 'http://localhost/cb'] } });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('client_secret');
    expect(res.body).toMatchObject({ type: 'public', scopes: ['read:code'] });
  });

  it('refuses redirect URIs that are not https or loopback http, carry a fragment or credentials, or are relative (400, naming the entry)', async () => {
    const u = await newUser();
    for (const [uri, message] of [
      ['http://app.example.com/cb', /https/], ['https://app.example.com/cb#frag', /fragment/], ['/cb', /absolute/],
      ['https://user:pw@app.example.com/cb', /user name/], ['javascript:alert(1)', /https/], [' https://app.example.com/cb', /white space/],
    ] as const) {
      const res = await clients(u.token, { body: { name: 'Bad', redirect_uris: [CALLBACK, uri] } });
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.errors).toEqual([{ path: '/redirect_uris/1', message: expect.stringMatching(message) }]);
    }
    expectProblem(await clients(u.token, { body: { name: 'None', redirect_uris: [] } }), 400, 'validation_failed');
    expectProblem(await clients(u.token, { body: { name: 'Kind', redirect_uris: [CALLBACK], type: 'hybrid' } }), 400, 'validation_failed');
    expectProblem(await clients(u.token, { body: { name: '   ', redirect_uris: [CALLBACK] } }), 400, 'validation_failed');
  });

  it('refuses scopes the owner\'s plan does not grant (403)', async () => {
    const u = await newUser();
    const res = await clients(u.token, { body: { name: 'Deployer', redirect_uris: [CALLBACK], scopes: ['deploy:apps'] } });
    expectProblem(res, 403, 'insufficient_scope');
    expect(res.body.detail).toContain('deploy:apps');
  });

  it('keeps clients private: another account gets 404 and an empty list; deleting twice is 404', async () => {
    const owner = await newUser();
    const other = await newUser();
    const created = await clients(owner.token, { body: { name: 'Mine', redirect_uris: [CALLBACK] } });
    expectProblem(await clients(other.token, { id: created.body.id }), 404, 'not_found');
    expectProblem(await clients(other.token, { method: 'DELETE', id: created.body.id }), 404, 'not_found');
    expect((await clients(other.token)).body.data).toEqual([]);
    expect((await clients(owner.token, { method: 'DELETE', id: created.body.id })).body).toEqual({ success: true });
    expectProblem(await clients(owner.token, { id: created.body.id }), 404, 'not_found');
    expectProblem(await clients(owner.token, { method: 'DELETE', id: created.body.id }), 404, 'not_found');
  });

  it('pages through clients newest first', async () => {
    const u = await newUser();
    for (const name of ['one', 'two', 'three']) await clients(u.token, { body: { name, redirect_uris: [CALLBACK] } });
    const page = await clients(u.token, { query: '?page=2&limit=2' });
    expect(page.body.pagination).toEqual({ page: 2, limit: 2, total: 3, total_pages: 2 });
    expect(page.body.data.map((c: { name: string }) => c.name)).toEqual(['one']);
    expectProblem(await clients(u.token, { query: '?limit=0' }), 400, 'validation_failed');
  });

  it('needs a session token: no credential is 401, an API key is 403', async () => {
    const u = await newUser();
    expectProblem(await request(`${t.url}/api/v1/oauth/clients`), 401, 'unauthorized');
    const key = await request(`${t.url}/api/v1/api-keys`, { token: u.token, body: { name: 'ci' } });
    expectProblem(await clients(key.body.key, { body: { name: 'x', redirect_uris: [CALLBACK] } }), 403, 'insufficient_scope');
  });

  it('documents the OAuth routes in the OpenAPI document', async () => {
    const doc = (await request(`${t.url}/openapi.json`)).body;
    for (const path of ['/api/v1/oauth/clients', '/api/v1/oauth/clients/{id}', '/oauth/token', '/oauth/revoke', '/oauth/introspect', '/oauth/authorize', '/.well-known/oauth-authorization-server']) {
      expect(doc.paths, path).toHaveProperty([path]);
    }
    expect(doc.paths['/oauth/token'].post.requestBody.content).toHaveProperty(['application/x-www-form-urlencoded']);
  });
});
