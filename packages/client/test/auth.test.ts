import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthenticationError, Codeloom, CodeloomError, type TokenPair } from '../src/index.js';
import { clientFor, newUser, recordingFetch, startTestServer, type TestServer } from './helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('auth, verify and profile against a real server', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t.close(); });

  it('register signs the client in; verify and profile describe the account', async () => {
    const { client, session, email } = await newUser(t);
    expect(session.accessToken.split('.')).toHaveLength(3);
    expect(session.refreshToken).toMatch(/^clr_/);
    expect(session.expiresIn).toBe(900);
    expect(session.user).toMatchObject({ email, plan: 'free' });
    expect(session.user!.id).toMatch(/^usr_/);

    const who = await client.verify();
    expect(who).toMatchObject({ valid: true, user: { id: session.user!.id, email }, subscription: { plan: 'free' }, credential: { type: 'session', environment: 'production' } });
    expect(who.credential.scopes).toEqual(['read:code', 'write:code']);

    const profile = await client.user.profile();
    expect(profile).toMatchObject({ id: session.user!.id, email, permissions: ['read:code', 'write:code'], environment: 'production' });
    expect(profile.rate_limits).toEqual({ requests_per_minute: 100, requests_per_hour: 1000, tokens_per_minute: 20000 });
    expect(profile.organization.id).toMatch(/^org_/);
  });

  it('login, explicit refresh (rotating), logout', async () => {
    const { email, password, ip } = await newUser(t);
    const seen: TokenPair[] = [];
    const client = clientFor(t, null, { onTokens: (tokens) => { seen.push(tokens); } }, ip);
    const login = await client.auth.login({ email: `  ${email.toUpperCase()} `, password });
    expect(login.user!.email).toBe(email);
    expect(seen).toEqual([{ accessToken: login.accessToken, refreshToken: login.refreshToken }]);

    const refreshed = await client.auth.refresh();
    expect(refreshed.refreshToken).not.toBe(login.refreshToken);
    expect(client.auth.tokens).toEqual({ accessToken: refreshed.accessToken, refreshToken: refreshed.refreshToken });
    expect(seen).toHaveLength(2);
    expect((await client.verify()).user.email).toBe(email);

    // The old refresh token is spent: presenting it again is theft detection (401).
    const replay = await clientFor(t, null, {}, ip).auth.refresh(login.refreshToken).catch((e: unknown) => e as CodeloomError);
    expect(CodeloomError.isInstance(replay)).toBe(true);
    expect(replay).toMatchObject({ status: 401, code: 'invalid_token' });
  });

  it('logout ends the session: the old token is refused and the client holds no tokens', async () => {
    const { client, session, ip } = await newUser(t);
    expect(await client.auth.logout()).toEqual({ success: true });
    expect(client.auth.tokens).toBeUndefined();
    const stale = clientFor(t, { accessToken: session.accessToken }, {}, ip);
    const error = await stale.user.profile().catch((e: unknown) => e as CodeloomError);
    expect(error).toMatchObject({ status: 401, code: 'invalid_token' });
    const signedOut = await client.user.profile().catch((e: unknown) => e as CodeloomError);
    expect(signedOut).toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('changePassword ends the other sessions and keeps this one; the reset calls answer as documented', async () => {
    const { client, email, password, ip } = await newUser(t);
    const other = clientFor(t, null, {}, ip);
    await other.auth.login({ email, password });
    const wrong = await client.auth.changePassword({ current_password: 'not it', new_password: 'a new passphrase' }).catch((e: unknown) => e);
    expect(CodeloomError.isInstance(wrong) && wrong.code).toBe('invalid_credentials');
    expect(await client.auth.changePassword({ current_password: password, new_password: 'a new passphrase' })).toEqual({ success: true });
    expect((await client.verify()).valid).toBe(true);
    const refused = await other.verify().catch((e: unknown) => e);
    expect(CodeloomError.isInstance(refused) && refused.code).toBe('invalid_token');

    const anon = clientFor(t, null);
    expect(await anon.auth.requestPasswordReset({ email })).toEqual({ accepted: true, detail: expect.stringContaining('If an account uses this address') });
    const bad = await anon.auth.confirmPasswordReset({ token: 'clpr_unknown', new_password: 'a new passphrase' }).catch((e: unknown) => e);
    expect(CodeloomError.isInstance(bad) && [bad.status, bad.code]).toEqual([400, 'invalid_reset_token']);
  });

  it('errors carry status, code, detail, requestId and field errors', async () => {
    const { email, ip } = await newUser(t);
    const client = clientFor(t, null, {}, ip);
    const wrong = await client.auth.login({ email, password: 'not the password' }).catch((e: unknown) => e as CodeloomError);
    expect(CodeloomError.isInstance(wrong)).toBe(true);
    expect(wrong).toMatchObject({ status: 401, code: 'invalid_credentials', name: 'AuthenticationError' });
    expect(wrong).toBeInstanceOf(AuthenticationError);
    expect(wrong).toBeInstanceOf(CodeloomError);
    expect(wrong.requestId).toMatch(/^req_/);
    expect(wrong.headers?.['x-request-id']).toBe(wrong.requestId);
    expect(wrong.detail.length).toBeGreaterThan(0);

    const dup = await client.auth.register({ email, password: 'another password', name: 'Dup' }).catch((e: unknown) => e as CodeloomError);
    expect(dup).toMatchObject({ status: 409, code: 'conflict' });

    const invalid = await client.auth.register({ email: 'not-an-email', password: 'short', name: '' }).catch((e: unknown) => e as CodeloomError);
    expect(invalid).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(invalid.errors!.map((e) => e.path).sort()).toEqual(['/email', '/name', '/password']);
  });

  it('a client with no credential says so without calling the server for streaming', async () => {
    const client = clientFor(t, null);
    const error = await client.stream.generate({ prompt: 'x' }).result.catch((e: unknown) => e as CodeloomError);
    expect(error).toMatchObject({ code: 'not_authenticated' });
  });

  it('cannot reach a server: connection_error', async () => {
    const client = new Codeloom({ apiKey: 'cl_live_x' }, { baseUrl: 'http://127.0.0.1:9', maxRetries: 0 });
    const error = await client.verify().catch((e: unknown) => e as CodeloomError);
    expect(error).toMatchObject({ status: 0, code: 'connection_error' });
  });
});

describe('refresh and repeat on token_expired (access TTL 1 s)', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer({ env: { CODELOOM_ACCESS_TOKEN_TTL: '1' } }); });
  afterAll(async () => { await t.close(); });

  /** Signs up, then waits until the access token has expired. */
  async function expiredSession() {
    const { session, ip } = await newUser(t);
    await sleep(2100);
    return { session, ip };
  }

  it('two concurrent calls share one refresh; onTokens is called once; both succeed', async () => {
    const { session, ip } = await expiredSession();
    const rec = recordingFetch();
    const seen: TokenPair[] = [];
    const client = clientFor(t, { accessToken: session.accessToken, refreshToken: session.refreshToken }, { fetch: rec.fetch, onTokens: (tokens) => { seen.push(tokens); } }, ip);

    const [profile, projects] = await Promise.all([client.user.profile(), client.projects.page(1)]);
    expect(profile.id).toBe(session.user!.id);
    expect(projects.data).toEqual([]);

    const refreshes = rec.calls.filter((c) => c.url.endsWith('/auth/refresh'));
    expect(refreshes).toHaveLength(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.accessToken).not.toBe(session.accessToken);
    expect(seen[0]!.refreshToken).not.toBe(session.refreshToken);
    expect(client.auth.tokens).toEqual(seen[0]);
    // Each call: one 401 token_expired, then one repeat with the new token.
    const profileCalls = rec.calls.filter((c) => c.url.endsWith('/user/profile'));
    expect(profileCalls.map((c) => c.status)).toEqual([401, 200]);
    expect(profileCalls[1]!.headers.authorization).toBe(`Bearer ${seen[0]!.accessToken}`);
    expect(rec.calls.filter((c) => c.url.includes('/projects')).map((c) => c.status)).toEqual([401, 200]);
  });

  it('an explicit auth.refresh() during an automatic one joins it (the rotating token is presented once)', async () => {
    const { session, ip } = await expiredSession();
    const rec = recordingFetch();
    const seen: TokenPair[] = [];
    const client = clientFor(t, { accessToken: session.accessToken, refreshToken: session.refreshToken }, { fetch: rec.fetch, onTokens: (tokens) => { seen.push(tokens); } }, ip);
    const [profile, refreshed] = await Promise.all([client.user.profile(), client.auth.refresh()]);
    expect(profile.id).toBe(session.user!.id);
    expect(rec.calls.filter((c) => c.url.endsWith('/auth/refresh'))).toHaveLength(1);
    expect(seen).toEqual([{ accessToken: refreshed.accessToken, refreshToken: refreshed.refreshToken }]);
    expect((await client.verify()).valid).toBe(true); // the session was not revoked
  });

  it('repeats only once: a second token_expired after the refresh is thrown', async () => {
    const { session, ip } = await expiredSession();
    // A fetch that keeps sending the stale token makes the repeat fail again.
    const rec = recordingFetch((url, init) => fetch(url, url.endsWith('/auth/refresh') ? init : { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${session.accessToken}` } }));
    const client = clientFor(t, { accessToken: session.accessToken, refreshToken: session.refreshToken }, { fetch: rec.fetch }, ip);
    const error = await client.user.profile().catch((e: unknown) => e as CodeloomError);
    expect(error).toMatchObject({ status: 401, code: 'token_expired' });
    expect(rec.calls.map((c) => c.status)).toEqual([401, 200, 401]);
  });

  it('without a refresh token, token_expired is thrown as is', async () => {
    const { session, ip } = await expiredSession();
    const client = clientFor(t, { accessToken: session.accessToken }, {}, ip);
    const error = await client.user.profile().catch((e: unknown) => e as CodeloomError);
    expect(error).toMatchObject({ status: 401, code: 'token_expired' });
  });

  it('a failed refresh (spent refresh token) surfaces the refresh error', async () => {
    const { session, ip } = await expiredSession();
    await clientFor(t, null, {}, ip).auth.refresh(session.refreshToken); // spends it elsewhere
    const client = clientFor(t, { accessToken: session.accessToken, refreshToken: session.refreshToken }, {}, ip);
    const error = await client.user.profile().catch((e: unknown) => e as CodeloomError);
    expect(error).toMatchObject({ status: 401, code: 'invalid_token' });
  });

  // Streaming with an expired access token: channel-renewal.test.ts (tokens of 1–2 s there, not 0–1 s).

  it('register and login responses carry the short lifetime', async () => {
    const { session } = await newUser(t);
    expect(session.expiresIn).toBe(1);
  });
});
