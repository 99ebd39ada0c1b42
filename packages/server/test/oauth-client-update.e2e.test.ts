import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { CALLBACK, pkcePair } from './helpers/oauth.js';

/** PATCH /api/v1/oauth/clients/{id}: the dashboard's "edit redirect URIs". */
describe('OAuth client update over HTTP', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t?.close(); });

  const call = (token: string, path: string, method: string, body?: unknown) =>
    request(`${t.url}/api/v1/oauth/clients${path}`, { token, method, ...(body === undefined ? {} : { body }), headers: { 'x-forwarded-for': nextIp() } });

  it('replaces the redirect URIs and the name; /oauth/authorize follows the new list at once', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    const created = await call(u.token, '', 'POST', { name: 'Acme', redirect_uris: [CALLBACK] });
    const id = created.body.id as string;
    const next = 'https://docs.acme.example/cb';
    const updated = await call(u.token, `/${id}`, 'PATCH', { redirect_uris: [next], name: ' Acme Docs ' });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ id, name: 'Acme Docs', redirect_uris: [next], type: 'confidential' });
    expect(updated.body.client_secret).toBeUndefined();
    expect((await call(u.token, `/${id}`, 'GET')).body.redirect_uris).toEqual([next]);

    const pkce = await pkcePair();
    const authorize = (uri: string) => fetch(`${t.url}/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: id, redirect_uri: uri, code_challenge: pkce.challenge, code_challenge_method: 'S256' })}`, { redirect: 'manual', headers: { 'x-forwarded-for': nextIp() } });
    expect((await authorize(CALLBACK)).status).toBe(400); // no longer registered: the error page, never a redirect
    expect((await authorize(next)).status).toBe(200);
  });

  it('validates like registration, and another account\'s client is not found', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    const other = await registerUser(t.url, { ip: nextIp() });
    const id = (await call(u.token, '', 'POST', { name: 'Acme', redirect_uris: [CALLBACK] })).body.id as string;
    const bad = await call(u.token, `/${id}`, 'PATCH', { redirect_uris: ['http://evil.example/cb'] });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'validation_failed', errors: [{ path: '/redirect_uris/0' }] });
    expect((await call(u.token, `/${id}`, 'PATCH', {})).status).toBe(400);
    expect((await call(u.token, `/${id}`, 'PATCH', { redirect_uris: [] })).status).toBe(400);
    expect((await call(u.token, `/${id}`, 'PATCH', { type: 'public' })).status).toBe(400);
    expect((await call(u.token, `/${id}`, 'PATCH', { name: '   ' })).status).toBe(400);
    const foreign = await call(other.token, `/${id}`, 'PATCH', { redirect_uris: ['https://x.example/cb'] });
    expect(foreign.status).toBe(404);
    expect((await call(u.token, `/${id}`, 'GET')).body.redirect_uris).toEqual([CALLBACK]);
    expect((await call(u.token, '/cli_missing', 'PATCH', { name: 'x' })).status).toBe(404);
  });
});
