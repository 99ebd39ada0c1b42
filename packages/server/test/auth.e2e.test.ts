import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, createRemoteJWKSet, decodeProtectedHeader, jwtVerify, base64url } from 'jose';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/load-config.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request, type JsonResponse } from './helpers/http.js';
import { awayFromWindowEnd } from './helpers/limit-windows.js';

const ISSUER = 'http://codeloom.test';
const uniqueEmail = (tag: string) => `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;

function expectProblem(res: JsonResponse, status: number, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code, type: `/docs/errors#${code}` });
}

describe('authentication over HTTP', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t.close(); });

  const post = (path: string, body: unknown, ip = nextIp(), headers: Record<string, string> = {}) =>
    request(`${t.url}${path}`, { body, headers: { 'x-forwarded-for': ip, ...headers } });
  const verify = (token: string) => request(`${t.url}/api/v1/auth/verify`, { token, headers: { 'x-forwarded-for': nextIp() } });
  const refreshWith = (refreshToken: string) => post('/api/v1/auth/refresh', { refreshToken });

  describe('register', () => {
    it('answers 201 with the auth response in both spellings, a usr_ id and the free plan', async () => {
      const email = uniqueEmail('shape');
      const res = await post('/api/v1/auth/register', { email, password: 'correct horse battery', name: 'Ada' });
      expect(res.status).toBe(201);
      const b = res.body;
      expect(b.token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(b.access_token).toBe(b.token);
      expect(b.refreshToken).toEqual(expect.any(String));
      expect(b.refresh_token).toBe(b.refreshToken);
      expect(b).toMatchObject({ expiresIn: 900, expires_in: 900, token_type: 'Bearer', user: { email, name: 'Ada', plan: 'free' } });
      expect(b.user.id).toMatch(/^usr_/);
      expect((await verify(b.token)).status).toBe(200);
    });

    it('trims the email and compares it case-insensitively; a second registration is 409 conflict', async () => {
      const local = `Mixed.${Math.random().toString(36).slice(2, 8)}`;
      const reg = await post('/api/v1/auth/register', { email: `  ${local}@Example.COM `, password: 'correct horse battery', name: 'Mixed' });
      expect(reg.status).toBe(201);
      expect(reg.body.user.email).toBe(`${local}@Example.COM`);
      const login = await post('/api/v1/auth/login', { email: `${local.toLowerCase()}@example.com`, password: 'correct horse battery' });
      expect(login.status).toBe(200);
      expect(login.body.user.id).toBe(reg.body.user.id);
      expectProblem(await post('/api/v1/auth/register', { email: `${local.toUpperCase()}@EXAMPLE.COM`, password: 'another password', name: 'Dup' }), 409, 'conflict');
    });

    it('ignores plan and permissions in the body (no mass assignment)', async () => {
      const res = await post('/api/v1/auth/register', { email: uniqueEmail('mass'), password: 'correct horse battery', name: 'Eve', plan: 'enterprise', permissions: ['deploy:apps'] });
      expect(res.status).toBe(201);
      expect(res.body.user.plan).toBe('free');
      const v = await verify(res.body.token);
      expect(v.body.subscription.plan).toBe('free');
      expect(v.body.credential.scopes).not.toContain('deploy:apps');
    });

    it.each([['7 characters', 7], ['257 characters', 257]])('refuses a password of %s with 400 naming /password', async (_label, n) => {
      const res = await post('/api/v1/auth/register', { email: uniqueEmail('pw'), password: 'p'.repeat(n), name: 'Pw' });
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain('/password');
    });

    it.each([8, 256])('accepts a password of exactly %i characters', async (n) => {
      expect((await post('/api/v1/auth/register', { email: uniqueEmail('pwok'), password: 'p'.repeat(n), name: 'Pw' })).status).toBe(201);
    });

    it('200 concurrent registrations of one email create exactly one account', async () => {
      const body = { email: uniqueEmail('race'), password: 'correct horse battery', name: 'Race' };
      const all = await Promise.all(Array.from({ length: 200 }, () => post('/api/v1/auth/register', body)));
      const statuses = all.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(199);
      expect(all.filter((r) => r.status === 409).every((r) => r.body.code === 'conflict')).toBe(true);
    });
  });

  describe('login', () => {
    it('200 for the right password; the same 401 invalid_credentials for a wrong password and an unknown email', async () => {
      const u = await registerUser(t.url, { ip: nextIp() });
      const ok = await post('/api/v1/auth/login', { email: u.email, password: u.password });
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ token_type: 'Bearer', expires_in: 900, user: { id: u.user.id, plan: 'free' } });
      const wrong = await post('/api/v1/auth/login', { email: u.email, password: 'not the password' });
      const unknown = await post('/api/v1/auth/login', { email: uniqueEmail('nobody'), password: 'not the password' });
      expectProblem(wrong, 401, 'invalid_credentials');
      expectProblem(unknown, 401, 'invalid_credentials');
      expect({ ...unknown.body, request_id: '' }).toEqual({ ...wrong.body, request_id: '' });
    });

    it('throttles one account after 5 failures, from any address, and then refuses the right password too', async () => {
      const u = await registerUser(t.url, { ip: nextIp() });
      await awayFromWindowEnd(3, 900);
      for (let i = 0; i < 5; i++) expectProblem(await post('/api/v1/auth/login', { email: u.email, password: `wrong-${i}-password` }), 401, 'invalid_credentials');
      const blocked = await post('/api/v1/auth/login', { email: u.email, password: u.password });
      expectProblem(blocked, 429, 'rate_limited');
      const retryAfter = Number(blocked.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 900).toBe(true);
    });

    it('throttles one address after 20 failures across different emails', async () => {
      const ip = nextIp();
      const u = await registerUser(t.url, { ip: nextIp() });
      await awayFromWindowEnd(3, 900);
      for (let i = 0; i < 20; i++) expectProblem(await post('/api/v1/auth/login', { email: uniqueEmail(`guess${i}`), password: 'guessing-password' }, ip), 401, 'invalid_credentials');
      const blocked = await post('/api/v1/auth/login', { email: u.email, password: u.password }, ip);
      expectProblem(blocked, 429, 'rate_limited');
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await post('/api/v1/auth/login', { email: u.email, password: u.password })).status).toBe(200);
    });
  });

  describe('refresh, rotation and logout', () => {
    it('accepts refreshToken, refresh_token and POST /auth/refresh with the refresh token as bearer', async () => {
      const u = await registerUser(t.url, { ip: nextIp() });
      const a = await refreshWith(u.refreshToken);
      expect(a.status).toBe(200);
      const b = await post('/api/v1/auth/refresh', { refresh_token: a.body.refresh_token });
      expect(b.status).toBe(200);
      const c = await request(`${t.url}/auth/refresh`, { method: 'POST', token: b.body.refreshToken, headers: { 'x-forwarded-for': nextIp() } });
      expect(c.status).toBe(200);
      const tokens = [u.refreshToken, a.body.refreshToken, b.body.refreshToken, c.body.refreshToken];
      expect(new Set(tokens).size).toBe(4);
      for (const r of [a, b, c]) {
        expect(r.body).toMatchObject({ token_type: 'Bearer', expiresIn: 900, user: { id: u.user.id } });
        expect((await verify(r.body.access_token)).status).toBe(200);
      }
      expectProblem(await post('/api/v1/auth/refresh', {}), 400, 'validation_failed');
      expectProblem(await refreshWith('clr_never-issued'), 401, 'invalid_token');
    });

    it('a used refresh token is refused and revokes the session, newest tokens included', async () => {
      const u = await registerUser(t.url, { ip: nextIp() });
      const first = await refreshWith(u.refreshToken);
      const newest = await refreshWith(first.body.refreshToken);
      expect(newest.status).toBe(200);
      expect((await verify(newest.body.token)).status).toBe(200);
      expectProblem(await refreshWith(u.refreshToken), 401, 'invalid_token');
      expectProblem(await verify(newest.body.token), 401, 'invalid_token');
      expectProblem(await verify(u.token), 401, 'invalid_token');
      expectProblem(await refreshWith(newest.body.refreshToken), 401, 'invalid_token');
    });

    it('logout answers {success:true}; the access and refresh tokens stop working at once', async () => {
      const u = await registerUser(t.url, { ip: nextIp() });
      const out = await request(`${t.url}/api/v1/auth/logout`, { method: 'POST', token: u.token, headers: { 'x-forwarded-for': nextIp() } });
      expect(out.status).toBe(200);
      expect(out.body).toEqual({ success: true });
      expectProblem(await verify(u.token), 401, 'invalid_token');
      expectProblem(await refreshWith(u.refreshToken), 401, 'invalid_token');
    });
  });

  describe('verify and the access token', () => {
    it('verify describes a session and an API key credential', async () => {
      const u = await registerUser(t.url, { ip: nextIp(), name: 'Vera' });
      const s = await verify(u.token);
      expect(s.status).toBe(200);
      expect(s.body).toEqual({
        valid: true,
        user: { id: u.user.id, email: u.email, name: 'Vera' },
        organization: { id: expect.stringMatching(/^org_/), name: expect.any(String) },
        subscription: { plan: 'free' },
        credential: { type: 'session', scopes: ['read:code', 'write:code'], environment: 'production' },
      });
      const key = await request(`${t.url}/api/v1/api-keys`, { token: u.token, body: { name: 'verify' } });
      const k = await verify(key.body.key);
      expect(k.status).toBe(200);
      expect(k.body.organization).toEqual(s.body.organization);
      expect(k.body.credential).toEqual({ type: 'api_key', scopes: ['read:code', 'write:code'], environment: 'production' });
    });

    it('is an EdDSA JWT with kid and the documented claims, verifiable with the JWKS', async () => {
      const u = await registerUser(t.url, { ip: nextIp() });
      const header = decodeProtectedHeader(u.token);
      expect(header.alg).toBe('EdDSA');
      expect(header.kid).toEqual(expect.any(String));
      const jwks = createRemoteJWKSet(new URL(`${t.url}/.well-known/jwks.json`));
      const { payload } = await jwtVerify(u.token, jwks, { issuer: ISSUER, audience: 'codeloom', algorithms: ['EdDSA'] });
      expect(payload).toMatchObject({ iss: ISSUER, aud: 'codeloom', sub: u.user.id, scope: 'read:code write:code' });
      expect(payload.sid).toEqual(expect.any(String));
      expect(payload.jti).toEqual(expect.any(String));
      expect([900, 901]).toContain(payload.exp! - payload.iat!);
    });

    it('refuses forged tokens with 401 invalid_token', async () => {
      const u = await registerUser(t.url, { ip: nextIp() });
      const [h, p, s] = u.token.split('.') as [string, string, string];
      const claims = JSON.parse(new TextDecoder().decode(base64url.decode(p)));
      const enc = (o: object) => base64url.encode(JSON.stringify(o));
      const jwks = (await request(`${t.url}/.well-known/jwks.json`)).body;
      const jwk = jwks.keys[0];
      const hmac = (key: Uint8Array) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: jwk.kid }).sign(key);
      const forged = {
        'alg none, empty signature': `${enc({ alg: 'none', typ: 'JWT' })}.${p}.`,
        'alg none, some signature': `${enc({ alg: 'none', typ: 'JWT' })}.${p}.${s}`,
        'HS256 keyed with the public key bytes': await hmac(base64url.decode(jwk.x)),
        'HS256 keyed with the public JWK text': await hmac(new TextEncoder().encode(JSON.stringify(jwk))),
        'tampered payload': `${h}.${enc({ ...claims, scope: 'read:code write:code deploy:apps' })}.${s}`,
        'garbage': 'this-is-not-a-token',
      };
      for (const [label, token] of Object.entries(forged)) {
        const res = await verify(token);
        expect(res.status, label).toBe(401);
        expect(res.body.code, label).toBe('invalid_token');
      }
    });
  });
});

describe('expired access tokens', () => {
  let t: TestServer;
  // Long enough that a loaded machine still checks the fresh token within its lifetime.
  const TTL_S = 4;
  beforeAll(async () => { t = await startTestServer({ env: { CODELOOM_ACCESS_TOKEN_TTL: String(TTL_S) } }); });
  afterAll(async () => { await t.close(); });

  it('answers 401 token_expired with WWW-Authenticate once exp has passed', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    const issued = Date.now();
    const fresh = await request(`${t.url}/api/v1/auth/verify`, { token: u.token });
    expect(fresh.status).toBe(200);
    // exp is in whole seconds: past it once TTL + 1 s have gone since the token was issued.
    await new Promise((r) => setTimeout(r, Math.max(0, issued + (TTL_S + 1) * 1000 - Date.now())));
    const res = await request(`${t.url}/api/v1/auth/verify`, { token: u.token });
    expectProblem(res, 401, 'token_expired');
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token", error_description="token expired"');
    const renewed = await request(`${t.url}/api/v1/auth/refresh`, { body: { refreshToken: u.refreshToken } });
    expect(renewed.status).toBe(200);
    expect(renewed.body.expires_in).toBe(TTL_S);
  });
});

describe('signing keys and revocations survive a restart (file-backed SQLite)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'codeloom-restart-'));
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', CODELOOM_ARGON2_MEMORY_KIB: '1024', CODELOOM_TRUST_PROXY: 'true', CODELOOM_ISSUER: ISSUER, CODELOOM_DATA_DIR: dir });
  const start = async () => {
    const server = await buildApp(config);
    return { server, url: await server.app.listen({ host: '127.0.0.1', port: 0 }) };
  };
  afterAll(() => { rmSync(dir, { recursive: true, force: true }); });

  it('a token issued before the restart still verifies after it; a logged-out one stays refused', async () => {
    const first = await start();
    const kept = await registerUser(first.url, { ip: nextIp() });
    const gone = await registerUser(first.url, { ip: nextIp() });
    expect((await request(`${first.url}/api/v1/auth/logout`, { method: 'POST', token: gone.token })).status).toBe(200);
    const kidBefore = decodeProtectedHeader(kept.token).kid;
    await first.server.close();

    const second = await start();
    try {
      const jwks = (await request(`${second.url}/.well-known/jwks.json`)).body;
      expect(jwks.keys.map((k: { kid: string }) => k.kid)).toContain(kidBefore);
      const res = await request(`${second.url}/api/v1/auth/verify`, { token: kept.token });
      expect(res.status).toBe(200);
      expect(res.body.user.id).toBe(kept.user.id);
      expectProblem(await request(`${second.url}/api/v1/auth/verify`, { token: gone.token }), 401, 'invalid_token');
      const login = await request(`${second.url}/api/v1/auth/login`, { body: { email: kept.email, password: kept.password } });
      expect(decodeProtectedHeader(login.body.token).kid).toBe(kidBefore);
    } finally {
      await second.server.close();
    }
  });
});
