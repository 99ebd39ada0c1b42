import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { startTestServer, nextIp, uniqueName, TEST_DATABASE_URL, type TestServer } from './helpers/test-server.js';
import { dropPgSchema } from './helpers/pg-schema.js';
import { registerUser, request } from './helpers/http.js';
import { CALLBACK, TEST_ISSUER, FormBrowser, decide, discover, formFields, pkcePair, registerClient, signInAndDecide } from './helpers/oauth.js';

/**
 * The authorization code flow end to end, driven by a real OAuth client
 * library (openid-client) against the running server: discovery, PKCE,
 * sign-in and consent through the forms, exchange, use, refresh,
 * introspection and revocation. Run on every storage dialect.
 */
const dialects = [{ name: 'SQLite', dialect: 'sqlite' as const }, ...(TEST_DATABASE_URL ? [{ name: 'PostgreSQL', dialect: 'postgres' as const }] : [])];
if (!TEST_DATABASE_URL) console.log('skipping OAuth flow on PostgreSQL: TEST_DATABASE_URL is not set');

describe.each(dialects)('OAuth 2.0 authorization code flow ($name)', ({ dialect }) => {
  let t: TestServer;
  const pgSchema = uniqueName('oauth_flow');
  beforeAll(async () => { t = await startTestServer({ dialect, pgSchema }); });
  afterAll(async () => {
    await t?.close();
    if (dialect === 'postgres') await dropPgSchema(pgSchema);
  });

  const verify = (token: string) => request(`${t.url}/api/v1/auth/verify`, { token, headers: { 'x-forwarded-for': nextIp() } });

  async function setup(clientBody: Record<string, unknown> = {}) {
    const ip = nextIp();
    const developer = await registerUser(t.url, { ip });
    const person = await registerUser(t.url, { ip: nextIp(), name: 'Ada Lovelace' });
    const client = await registerClient(t.url, developer.token, { name: 'Acme Docs', redirect_uris: [CALLBACK], ...clientBody });
    return { ip, developer, person, client };
  }

  it('runs discovery, PKCE sign-in and consent, exchange, use, refresh, introspection and revocation with openid-client', async () => {
    const { ip, person, client } = await setup();
    expect(client.client_secret).toMatch(/^clo_cs_/);
    const config = await discover(t.url, ip, client, 'basic');
    const meta = config.serverMetadata();
    expect(meta).toMatchObject({
      issuer: TEST_ISSUER, authorization_endpoint: `${TEST_ISSUER}/oauth/authorize`, token_endpoint: `${TEST_ISSUER}/oauth/token`,
      code_challenge_methods_supported: ['S256'], grant_types_supported: ['authorization_code', 'refresh_token'], response_types_supported: ['code'],
    });

    const { verifier, challenge } = await pkcePair();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: 'read:code write:code', code_challenge: challenge, code_challenge_method: 'S256', state });
    const browser = new FormBrowser(t.url, ip);
    const { location, consentHtml } = await signInAndDecide(browser, url.href, person);
    expect(consentHtml).toContain('Acme Docs');
    expect(consentHtml).toContain(person.email);
    expect(consentHtml).toContain('See your code');
    expect(consentHtml).toContain('Generate and change code');
    expect(`${location.origin}${location.pathname}`).toBe(CALLBACK);
    expect(location.searchParams.get('state')).toBe(state);
    expect(location.searchParams.get('iss')).toBe(TEST_ISSUER);
    expect(location.searchParams.get('code')).toMatch(/^clo_ac_/);

    const tokens = await oidc.authorizationCodeGrant(config, location, { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.access_token).toMatch(/^clo_at_[A-Za-z0-9_-]{43}$/);
    expect(tokens.refresh_token).toMatch(/^clo_rt_[A-Za-z0-9_-]{43}$/);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(900);
    expect(tokens.scope).toBe('read:code write:code');

    const whoami = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(`${TEST_ISSUER}/api/v1/auth/verify`), 'GET');
    expect(whoami.status).toBe(200);
    expect(await whoami.json()).toMatchObject({
      valid: true, user: { id: person.user.id, email: person.email },
      credential: { type: 'oauth', scopes: ['read:code', 'write:code'], environment: 'production' },
    });
    const projects = await request(`${t.url}/api/v1/projects`, { token: tokens.access_token, body: { name: 'made by an app' }, headers: { 'x-forwarded-for': ip } });
    expect(projects.status).toBe(201);

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.scope).toBe('read:code write:code');
    expect((await verify(refreshed.access_token)).body.credential.type).toBe('oauth');

    const active = await oidc.tokenIntrospection(config, refreshed.access_token);
    expect(active).toMatchObject({ active: true, client_id: client.client_id, username: person.email, sub: person.user.id, scope: 'read:code write:code', token_type: 'Bearer', iss: TEST_ISSUER });
    expect(active.exp! - active.iat!).toBe(900);
    expect((await oidc.tokenIntrospection(config, tokens.refresh_token!)).active).toBe(false); // rotated away
    expect((await oidc.tokenIntrospection(config, refreshed.refresh_token!)).active).toBe(true);

    await oidc.tokenRevocation(config, refreshed.refresh_token!);
    expect((await oidc.tokenIntrospection(config, refreshed.access_token)).active).toBe(false);
    const refused = await verify(refreshed.access_token);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('invalid_token');
    await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await oidc.tokenRevocation(config, 'clo_rt_not-a-token-this-server-issued'); // RFC 7009: unknown tokens are fine
  });

  it('serves a public client with PKCE and no secret, limited to the scopes it asked for', async () => {
    const { ip, person, client } = await setup({ type: 'public', scopes: ['read:code'] });
    expect(client.client_secret).toBeUndefined();
    const config = await discover(t.url, ip, client, 'none');
    const { verifier, challenge } = await pkcePair();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, code_challenge: challenge, code_challenge_method: 'S256' });
    const { location, consentHtml } = await signInAndDecide(new FormBrowser(t.url, ip), url.href, person);
    expect(consentHtml).toContain('See your code');
    expect(consentHtml).not.toContain('Generate and change code');
    const tokens = await oidc.authorizationCodeGrant(config, location, { pkceCodeVerifier: verifier, expectedState: oidc.skipStateCheck });
    expect(tokens.scope).toBe('read:code');
    expect((await verify(tokens.access_token)).body.credential.scopes).toEqual(['read:code']);
    const write = await request(`${t.url}/api/v1/projects`, { token: tokens.access_token, body: { name: 'nope' }, headers: { 'x-forwarded-for': ip } });
    expect(write.status).toBe(403);
    expect(write.body.code).toBe('insufficient_scope');
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    await expect(oidc.tokenIntrospection(config, refreshed.access_token)).rejects.toMatchObject({ error: 'invalid_client' });
    await oidc.tokenRevocation(config, refreshed.access_token);
    expect((await verify(refreshed.access_token)).status).toBe(401);
  });

  it('Deny sends the person back with error=access_denied and the state; a second authorization reuses the browser session', async () => {
    const { ip, person, client } = await setup();
    const config = await discover(t.url, ip, client);
    const { challenge } = await pkcePair();
    const browser = new FormBrowser(t.url, ip);
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, code_challenge: challenge, code_challenge_method: 'S256', state: 'xyz-123' });
    const denied = await signInAndDecide(browser, url.href, person, 'deny');
    expect(Object.fromEntries(denied.location.searchParams)).toMatchObject({ error: 'access_denied', state: 'xyz-123', iss: TEST_ISSUER });
    expect(denied.location.searchParams.has('code')).toBe(false);
    await expect(oidc.authorizationCodeGrant(config, denied.location, { expectedState: 'xyz-123' })).rejects.toMatchObject({ error: 'access_denied' });

    const again = await decide(browser, url.href, 'allow'); // still signed in: straight to consent
    expect(again.location.searchParams.get('code')).toMatch(/^clo_ac_/);
  });

  it('sets HttpOnly SameSite=Lax cookies, Secure with the __Host- prefix over https, and stores the session hashed', async () => {
    const { ip, person, client } = await setup();
    const { challenge } = await pkcePair();
    const url = `/oauth/authorize?response_type=code&client_id=${client.client_id}&redirect_uri=${encodeURIComponent(CALLBACK)}&code_challenge=${challenge}&code_challenge_method=S256`;
    for (const https of [false, true]) {
      const browser = new FormBrowser(t.url, ip, https ? { 'x-forwarded-proto': 'https' } : {});
      const page = await browser.open(url);
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(page.headers.get('cache-control')).toBe('no-store');
      const signIn = await browser.open('/oauth/sign-in', { ...formFields(page.html, '/oauth/sign-in'), email: person.email, password: person.password });
      expect(signIn.status).toBe(303);
      const cookies = signIn.headers.getSetCookie();
      const session = cookies.find((c) => c.includes('codeloom_session='))!;
      expect(session).toMatch(https ? /^__Host-codeloom_session=/ : /^codeloom_session=/);
      expect(session).toMatch(/HttpOnly/);
      expect(session).toMatch(/SameSite=Lax/);
      expect(/;\s*Secure/.test(session)).toBe(https);
      const value = session.split(';')[0]!.split('=')[1]!;
      const rows = await t.server.ctx.store.handle.db.selectFrom('web_sessions').select('token_hash').execute();
      expect(rows.some((r) => r.token_hash === value)).toBe(false);
      expect(rows.length).toBeGreaterThan(0);
    }
  });

  it('keeps the API at 415 problem+json for form bodies while /oauth/token answers RFC 6749 JSON, for forms and JSON alike', async () => {
    const ip = nextIp();
    const form = await fetch(`${t.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip }, body: 'email=a%40b.c&password=x' });
    expect(form.status).toBe(415);
    expect(form.headers.get('content-type')).toMatch(/^application\/problem\+json/);

    const post = (body: string, type: string) => fetch(`${t.url}/oauth/token`, { method: 'POST', headers: { 'content-type': type, 'x-forwarded-for': ip }, body });
    const password = await post('grant_type=password&username=a&password=b&client_id=cli_x', 'application/x-www-form-urlencoded');
    expect(password.status).toBe(400);
    expect(password.headers.get('content-type')).toMatch(/^application\/json/);
    expect(password.headers.get('cache-control')).toBe('no-store');
    expect(await password.json()).toEqual({ error: 'unsupported_grant_type', error_description: expect.any(String) });
    const json = await post(JSON.stringify({ grant_type: 'authorization_code', code: 'clo_ac_nope', client_id: 'cli_nope', client_secret: 'x', redirect_uri: CALLBACK }), 'application/json');
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ error: 'invalid_client' });
    const text = await post('grant_type=refresh_token', 'text/plain');
    expect(text.status).toBe(400);
    expect(await text.json()).toMatchObject({ error: 'invalid_request' });
    const repeated = await post('grant_type=refresh_token&grant_type=authorization_code', 'application/x-www-form-urlencoded');
    expect(await repeated.json()).toMatchObject({ error: 'invalid_request' });
    const missing = await post('', 'application/x-www-form-urlencoded');
    expect(await missing.json()).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('grant_type') });
  });
});
