import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { connect as connectWs, type WsClient } from './helpers/ws-client.js';
import { CALLBACK, TEST_ISSUER, FormBrowser, discover, pkcePair, registerClient, signInAndDecide } from './helpers/oauth.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the authorization server refuses, and what a refusal revokes. */
describe('OAuth 2.0 failure cases', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t?.close(); });

  const verify = (token: string) => request(`${t.url}/api/v1/auth/verify`, { token, headers: { 'x-forwarded-for': nextIp() } });
  const token = (form: Record<string, string>, headers: Record<string, string> = {}) =>
    request(`${t.url}/oauth/token`, { raw: new URLSearchParams(form).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': nextIp(), ...headers } });

  /** A registered client, a person, and a code obtained through the pages. */
  async function codeFor(clientBody: Record<string, unknown> = {}, authorize: Record<string, string> = {}) {
    const ip = nextIp();
    const developer = await registerUser(t.url, { ip });
    const person = await registerUser(t.url, { ip: nextIp() });
    const client = await registerClient(t.url, developer.token, { name: 'Acme', redirect_uris: [CALLBACK], ...clientBody });
    const config = await discover(t.url, ip, client, client.client_secret ? 'basic' : 'none');
    const pkce = await pkcePair();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, code_challenge: pkce.challenge, code_challenge_method: 'S256', ...authorize });
    const { location } = await signInAndDecide(new FormBrowser(t.url, ip), url.href, person);
    return { ip, developer, person, client, config, pkce, location, code: location.searchParams.get('code')! };
  }
  const exchange = (c: Awaited<ReturnType<typeof codeFor>>, verifier: string | null = c.pkce.verifier) => token({
    grant_type: 'authorization_code', code: c.code, redirect_uri: CALLBACK, client_id: c.client.client_id,
    ...(c.client.client_secret ? { client_secret: c.client.client_secret } : {}), ...(verifier ? { code_verifier: verifier } : {}),
  });

  describe('the authorization request', () => {
    it('shows an error page and never redirects for an unregistered redirect URI, an unknown client or a missing redirect_uri', async () => {
      const developer = await registerUser(t.url, { ip: nextIp() });
      const client = await registerClient(t.url, developer.token, { name: 'Acme', redirect_uris: [CALLBACK] });
      const { challenge } = await pkcePair();
      const base = `response_type=code&code_challenge=${challenge}&code_challenge_method=S256`;
      for (const query of [
        `${base}&client_id=${client.client_id}&redirect_uri=${encodeURIComponent('https://evil.example/callback')}`,
        `${base}&client_id=${client.client_id}&redirect_uri=${encodeURIComponent(`${CALLBACK}/`)}`, // exact match only
        `${base}&client_id=cli_unknown&redirect_uri=${encodeURIComponent(CALLBACK)}`,
        `${base}&client_id=${client.client_id}`,
      ]) {
        const page = await new FormBrowser(t.url, nextIp()).open(`/oauth/authorize?${query}`);
        expect(page.status).toBe(400);
        expect(page.location).toBeNull();
        expect(page.headers.get('content-type')).toMatch(/^text\/html/);
        expect(page.html).toMatch(/<html lang="en">/);
        expect(page.html).not.toContain('evil.example');
        expect(page.html).not.toContain('action="/oauth/sign-in"');
      }
    });

    it('redirects with an error for a scope beyond the client, no PKCE on a public client, plain PKCE, or another response_type', async () => {
      const developer = await registerUser(t.url, { ip: nextIp() });
      const confidential = await registerClient(t.url, developer.token, { name: 'Reader', redirect_uris: [CALLBACK], scopes: ['read:code'] });
      const pub = await registerClient(t.url, developer.token, { name: 'SPA', redirect_uris: [CALLBACK], type: 'public' });
      const { challenge } = await pkcePair();
      const cases: Array<[string, Record<string, string>, string]> = [
        [confidential.client_id, { response_type: 'code', scope: 'read:code write:code', code_challenge: challenge, code_challenge_method: 'S256' }, 'invalid_scope'],
        [confidential.client_id, { response_type: 'code', scope: 'admin' }, 'invalid_scope'],
        [pub.client_id, { response_type: 'code' }, 'invalid_request'],
        [pub.client_id, { response_type: 'code', code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request'],
        [confidential.client_id, { response_type: 'token' }, 'unsupported_response_type'],
      ];
      for (const [clientId, params, error] of cases) {
        const query = new URLSearchParams({ client_id: clientId, redirect_uri: CALLBACK, state: 's1', ...params });
        const res = await new FormBrowser(t.url, nextIp()).open(`/oauth/authorize?${query}`);
        expect(res.status, JSON.stringify(params)).toBe(302);
        const back = new URL(res.location!);
        expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
        expect(Object.fromEntries(back.searchParams)).toMatchObject({ error, state: 's1', iss: TEST_ISSUER });
      }
    });
  });

  describe('the code exchange', () => {
    it('refuses a wrong or missing code_verifier; an error response does not spend the code (RFC 6749 §5.2)', async () => {
      const wrong = await codeFor();
      const other = await pkcePair();
      expect((await exchange(wrong, other.verifier)).body).toMatchObject({ error: 'invalid_grant' });
      const right = await exchange(wrong);
      expect(right.status, right.text).toBe(200);
      expect((await exchange(wrong)).body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('already used') });

      const missing = await codeFor();
      const res = await exchange(missing, null);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('code_verifier') });

      const pub = await codeFor({ type: 'public' });
      expect((await exchange(pub, null)).body).toMatchObject({ error: 'invalid_grant' });
    });

    it('refuses a replayed code and revokes the tokens the first exchange issued', async () => {
      const c = await codeFor();
      const first = await exchange(c);
      expect(first.status).toBe(200);
      expect((await verify(first.body.access_token)).status).toBe(200);
      const replay = await exchange(c);
      expect(replay.status).toBe(400);
      expect(replay.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('already used') });
      const after = await verify(first.body.access_token);
      expect(after.status).toBe(401);
      expect(after.body.code).toBe('invalid_token');
      expect((await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: c.client.client_id, client_secret: c.client.client_secret! })).body).toMatchObject({ error: 'invalid_grant' });
    });

    it('refuses a code sent with another redirect_uri, or by another client', async () => {
      const c = await codeFor({ redirect_uris: [CALLBACK, 'https://acme.example/cb'] });
      const res = await token({ grant_type: 'authorization_code', code: c.code, redirect_uri: 'https://acme.example/cb', code_verifier: c.pkce.verifier, client_id: c.client.client_id, client_secret: c.client.client_secret! });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^invalid_(request|grant)$/);

      const d = await codeFor();
      const thief = await registerClient(t.url, d.developer.token, { name: 'Thief', redirect_uris: [CALLBACK] });
      const stolen = await token({ grant_type: 'authorization_code', code: d.code, redirect_uri: CALLBACK, code_verifier: d.pkce.verifier, client_id: thief.client_id, client_secret: thief.client_secret! });
      expect(stolen.body).toMatchObject({ error: 'invalid_grant' });
    });

    it('authenticates confidential clients: a wrong secret is 401 invalid_client (with a Basic challenge when Basic was used)', async () => {
      const c = await codeFor();
      const basic = Buffer.from(`${c.client.client_id}:clo_cs_wrong`).toString('base64');
      const res = await token({ grant_type: 'authorization_code', code: c.code, redirect_uri: CALLBACK, code_verifier: c.pkce.verifier }, { authorization: `Basic ${basic}` });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic/);
      const noSecret = await token({ grant_type: 'authorization_code', code: c.code, redirect_uri: CALLBACK, code_verifier: c.pkce.verifier, client_id: c.client.client_id });
      expect(noSecret.body.error).toBe('invalid_client');
      expect((await exchange(c)).status).toBe(200); // failed client authentication did not spend the code
    });
  });

  describe('refresh tokens', () => {
    it('rotate, and a reused refresh token revokes the whole family', async () => {
      const c = await codeFor();
      const first = (await exchange(c)).body;
      const refresh = (rt: string, extra: Record<string, string> = {}) => token({ grant_type: 'refresh_token', refresh_token: rt, client_id: c.client.client_id, client_secret: c.client.client_secret!, ...extra });
      const second = await refresh(first.refresh_token);
      expect(second.status).toBe(200);
      const reuse = await refresh(first.refresh_token);
      expect(reuse.status).toBe(400);
      expect(reuse.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('already used') });
      expect((await refresh(second.body.refresh_token)).body).toMatchObject({ error: 'invalid_grant' });
      expect((await verify(second.body.access_token)).body.code).toBe('invalid_token');
      expect((await verify(first.access_token)).body.code).toBe('invalid_token');
    });

    it('may narrow the scope of one access token but never widen it; the next refresh token keeps the full grant', async () => {
      const c = await codeFor({ scopes: ['read:code'] }, { scope: 'read:code' });
      const first = (await exchange(c)).body;
      const refresh = (rt: string, scope?: string) => token({ grant_type: 'refresh_token', refresh_token: rt, client_id: c.client.client_id, client_secret: c.client.client_secret!, ...(scope ? { scope } : {}) });
      expect((await refresh(first.refresh_token, 'read:code write:code')).body).toMatchObject({ error: 'invalid_scope' });
      // The error response spent nothing (RFC 6749 §5.2): the same refresh token still works, once, and the grant is intact.
      const again = await refresh(first.refresh_token);
      expect(again.status, again.text).toBe(200);
      expect((await verify(first.access_token)).status).toBe(200);
      expect((await verify(again.body.access_token)).status).toBe(200);
      expect((await refresh(first.refresh_token)).body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('already used') });

      const wide = await codeFor();
      const w1 = (await exchange(wide)).body;
      const narrowed = await token({ grant_type: 'refresh_token', refresh_token: w1.refresh_token, scope: 'read:code', client_id: wide.client.client_id, client_secret: wide.client.client_secret! });
      expect(narrowed.body.scope).toBe('read:code');
      expect((await verify(narrowed.body.access_token)).body.credential.scopes).toEqual(['read:code']);
      const full = await token({ grant_type: 'refresh_token', refresh_token: narrowed.body.refresh_token, client_id: wide.client.client_id, client_secret: wide.client.client_secret! });
      expect(full.body.scope).toBe('read:code write:code');
    });
  });

  it('revoking an OAuth token (RFC 7009), replaying its refresh token or deleting its client closes the sockets that hold it (4401)', async () => {
    const form = (c: Awaited<ReturnType<typeof codeFor>>, extra: Record<string, string>) =>
      new URLSearchParams({ client_id: c.client.client_id, client_secret: c.client.client_secret!, ...extra }).toString();
    const formHeaders = { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': nextIp() };
    const expectClosed = async (ws: WsClient) => {
      expect((await ws.closed).code).toBe(4401);
      expect(ws.frames.find((f) => f.event === 'error')).toMatchObject({ data: { status: 401, code: 'invalid_token' } });
    };

    const revoked = await codeFor();
    const t1 = (await exchange(revoked)).body;
    const ws1 = await connectWs(t.url, t1.access_token);
    expect((await request(`${t.url}/oauth/revoke`, { raw: form(revoked, { token: t1.refresh_token }), headers: formHeaders })).status).toBe(200);
    await expectClosed(ws1);

    const replayed = await codeFor();
    const t2 = (await exchange(replayed)).body;
    const ws2 = await connectWs(t.url, t2.access_token);
    const rotate = () => request(`${t.url}/oauth/token`, { raw: form(replayed, { grant_type: 'refresh_token', refresh_token: t2.refresh_token }), headers: formHeaders });
    expect((await rotate()).status).toBe(200);
    expect((await rotate()).status).toBe(400);
    await expectClosed(ws2);

    const deleted = await codeFor();
    const t3 = (await exchange(deleted)).body;
    const ws3 = await connectWs(t.url, t3.access_token);
    expect((await request(`${t.url}/api/v1/oauth/clients/${deleted.client.client_id}`, { method: 'DELETE', token: deleted.developer.token })).status).toBe(200);
    await expectClosed(ws3);
  });

  it('a token stops working once its client is deleted', async () => {
    const c = await codeFor();
    const tokens = (await exchange(c)).body;
    expect((await verify(tokens.access_token)).status).toBe(200);
    const del = await request(`${t.url}/api/v1/oauth/clients/${c.client.client_id}`, { method: 'DELETE', token: c.developer.token });
    expect(del.status).toBe(200);
    const after = await verify(tokens.access_token);
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('invalid_token');
    const refresh = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: c.client.client_id, client_secret: c.client.client_secret! });
    expect(refresh.body.error).toBe('invalid_client');
  });

  it('grants only what the signing-in person\'s plan has, whatever the client may ask for', async () => {
    const ip = nextIp();
    const developer = await registerUser(t.url, { ip });
    await t.server.ctx.store.accounts.setPlanByEmail(developer.email.toLowerCase(), 'enterprise');
    const client = await registerClient(t.url, (await request(`${t.url}/api/v1/auth/login`, { body: { email: developer.email, password: developer.password }, headers: { 'x-forwarded-for': ip } })).body.token, { name: 'Deployer', redirect_uris: [CALLBACK], scopes: ['read:code', 'deploy:apps'] });
    const person = await registerUser(t.url, { ip: nextIp() }); // free plan: no deploy:apps
    const config = await discover(t.url, ip, client);
    const pkce = await pkcePair();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: 'read:code deploy:apps', code_challenge: pkce.challenge, code_challenge_method: 'S256' });
    const { location, consentHtml } = await signInAndDecide(new FormBrowser(t.url, ip), url.href, person);
    expect(consentHtml).toMatch(/not part of your free plan: deploy apps/);
    const tokens = await oidc.authorizationCodeGrant(config, location, { pkceCodeVerifier: pkce.verifier, expectedState: oidc.skipStateCheck });
    expect(tokens.scope).toBe('read:code');
  });
});

describe('OAuth 2.0 lifetimes', () => {
  // Two servers: one whose codes expire at once, one whose access tokens do (its codes live long enough to be exchanged under load).
  let codes: TestServer;
  let tokens: TestServer;
  beforeAll(async () => {
    codes = await startTestServer({ env: { CODELOOM_OAUTH_CODE_TTL: '1' } });
    tokens = await startTestServer({ env: { CODELOOM_ACCESS_TOKEN_TTL: '2' } });
  });
  afterAll(async () => {
    await codes?.close();
    await tokens?.close();
  });

  async function authorized(t: TestServer) {
    const ip = nextIp();
    const person = await registerUser(t.url, { ip });
    const client = await registerClient(t.url, person.token, { name: 'Slow', redirect_uris: [CALLBACK] });
    const config = await discover(t.url, ip, client);
    const pkce = await pkcePair();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, code_challenge: pkce.challenge, code_challenge_method: 'S256' });
    return { ip, config, pkce, ...(await signInAndDecide(new FormBrowser(t.url, ip), url.href, person)) };
  }

  it('refuses a code presented after its lifetime (CODELOOM_OAUTH_CODE_TTL)', async () => {
    const late = await authorized(codes);
    await sleep(1_500);
    await expect(oidc.authorizationCodeGrant(late.config, late.location, { pkceCodeVerifier: late.pkce.verifier, expectedState: oidc.skipStateCheck }))
      .rejects.toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('expired') });
  });

  it('answers an expired access token with 401 token_expired and a Bearer challenge; the refresh token still works', async () => {
    const a = await authorized(tokens);
    const issued = await oidc.authorizationCodeGrant(a.config, a.location, { pkceCodeVerifier: a.pkce.verifier, expectedState: oidc.skipStateCheck });
    expect(issued.expires_in).toBe(2);
    await sleep(2_500);
    const verify = (token: string) => request(`${tokens.url}/api/v1/auth/verify`, { token, headers: { 'x-forwarded-for': a.ip } });
    const res = await verify(issued.access_token);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('token_expired');
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const refreshed = await oidc.refreshTokenGrant(a.config, issued.refresh_token!);
    expect((await verify(refreshed.access_token)).status).toBe(200);
  });
});
