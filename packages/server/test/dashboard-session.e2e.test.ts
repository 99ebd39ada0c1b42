import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, TEST_DATABASE_URL, type TestServer } from './helpers/test-server.js';
import { request } from './helpers/http.js';

/** Cookies of one client, as a browser keeps them. */
class Jar {
  private cookies = new Map<string, string>();
  take(headers: Headers) {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const value = pair!.slice(eq + 1);
      if (/Max-Age=0/.test(line) || !value) this.cookies.delete(pair!.slice(0, eq)); else this.cookies.set(pair!.slice(0, eq), value);
    }
  }
  get header() { return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '); }
  has(name: string) { return this.cookies.has(name); }
}

describe('dashboard: static files, cookie session and CSRF', () => {
  let t: TestServer;
  beforeAll(async () => {
    const { buildWeb, webBuildNeeded } = await import('../../web/build.mjs');
    if (webBuildNeeded()) await buildWeb({ quiet: true });
    t = await startTestServer();
  });
  afterAll(async () => { await t?.close(); });

  async function call(jar: Jar, path: string, init: { method?: string; body?: unknown; csrf?: string; origin?: string } = {}) {
    const headers: Record<string, string> = { 'x-forwarded-for': nextIp(), cookie: jar.header };
    if (init.csrf) headers['x-csrf-token'] = init.csrf;
    if (init.origin) headers.origin = init.origin;
    const res = await request(`${t.url}${path}`, { method: init.method ?? 'POST', headers, ...(init.body === undefined ? {} : { body: init.body }) });
    jar.take(res.headers);
    return res;
  }
  async function csrfFor(jar: Jar) {
    const res = await call(jar, '/dashboard/session/csrf', { method: 'GET' });
    return res.body.csrf_token as string;
  }

  it('serves the page with a strict CSP and hashed, immutable assets; / redirects there', async () => {
    const root = await fetch(`${t.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/dashboard/');
    const index = await fetch(`${t.url}/dashboard/keys`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(index.headers.get('content-security-policy')).not.toContain('unsafe');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    const js = /src="(\/dashboard\/assets\/app-[A-Z0-9]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${t.url}${js}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${t.url}/dashboard/assets/nope.js`)).status).toBe(404);
  });

  it('refuses every session write without the CSRF header or from another origin; the cookie alone never opens /api/v1', async () => {
    const jar = new Jar();
    const email = `csrf-${Date.now()}@example.com`;
    const body = { name: 'Cee', email, password: 'correct horse battery' };
    // A cross-site form post: no header (the attacker cannot read the token).
    expect((await call(jar, '/dashboard/session/sign-up', { body })).status).toBe(403);
    const csrf = await csrfFor(jar);
    expect((await call(jar, '/dashboard/session/sign-up', { body, csrf: 'A'.repeat(43) })).status).toBe(403);
    expect((await call(jar, '/dashboard/session/sign-up', { body, csrf, origin: 'https://evil.example' })).status).toBe(403);
    const signedUp = await call(jar, '/dashboard/session/sign-up', { body, csrf });
    expect(signedUp.status, signedUp.text).toBe(200);
    const cookie = signedUp.headers.getSetCookie().find((c) => c.startsWith('codeloom_dashboard='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/); // plain http here; __Host- and Secure over https
    const token = signedUp.body.access_token as string;
    expect((await request(`${t.url}/api/v1/auth/verify`, { token, headers: { 'x-forwarded-for': nextIp() } })).status).toBe(200);

    // The session cookie is not a credential for the API.
    expect((await call(jar, '/api/v1/user/profile', { method: 'GET' })).status).toBe(401);
    expect((await call(jar, '/api/v1/api-keys', { body: { name: 'x' } })).status).toBe(401);
    // No token without the header.
    expect((await call(jar, '/dashboard/session/token')).status).toBe(403);
    const again = await call(jar, '/dashboard/session/token', { csrf });
    expect(again.status).toBe(200);

    // Sign-out needs the header too; then the session, and every token it issued, is gone.
    expect((await call(jar, '/dashboard/session/sign-out')).status).toBe(403);
    expect((await call(jar, '/dashboard/session/token', { csrf })).status).toBe(200);
    expect((await call(jar, '/dashboard/session/sign-out', { csrf })).status).toBe(200);
    expect(jar.has('codeloom_dashboard')).toBe(false);
    expect((await request(`${t.url}/api/v1/auth/verify`, { token: again.body.access_token, headers: { 'x-forwarded-for': nextIp() } })).status).toBe(401);
    expect((await request(`${t.url}/api/v1/auth/verify`, { token, headers: { 'x-forwarded-for': nextIp() } })).status).toBe(401);

    // Sign in again; a wrong password is the usual 401.
    expect((await call(jar, '/dashboard/session/sign-in', { body: { email, password: 'wrong password' }, csrf })).status).toBe(401);
    const signedIn = await call(jar, '/dashboard/session/sign-in', { body: { email, password: body.password }, csrf });
    expect(signedIn.status).toBe(200);
    expect((await call(jar, '/dashboard/session/token', { csrf })).status).toBe(200);
  });

  it('is off with CODELOOM_DASHBOARD=false', async () => {
    const off = await startTestServer({ env: { CODELOOM_DASHBOARD: 'false' } });
    try {
      expect((await fetch(`${off.url}/dashboard`)).status).toBe(404);
      expect((await fetch(`${off.url}/`, { redirect: 'manual' })).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});

describe.skipIf(!TEST_DATABASE_URL)('dashboard session on PostgreSQL', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer({ dialect: 'postgres' }); });
  afterAll(async () => { await t?.close(); });

  it('signs up, issues tokens from the cookie, and signs out', async () => {
    const jar = new Jar();
    const ip = nextIp();
    const post = async (path: string, csrf: string, body?: unknown) => {
      const res = await request(`${t.url}/dashboard/session/${path}`, { method: 'POST', headers: { 'x-forwarded-for': ip, cookie: jar.header, 'x-csrf-token': csrf }, ...(body ? { body } : {}) });
      jar.take(res.headers);
      return res;
    };
    const first = await request(`${t.url}/dashboard/session/csrf`, { headers: { 'x-forwarded-for': ip } });
    jar.take(first.headers);
    const csrf = first.body.csrf_token as string;
    expect((await post('sign-up', csrf, { name: 'Pat', email: `pg-${Date.now()}@example.com`, password: 'correct horse battery' })).status).toBe(200);
    const token = await post('token', csrf);
    expect(token.status).toBe(200);
    expect((await request(`${t.url}/api/v1/user/profile`, { token: token.body.access_token, headers: { 'x-forwarded-for': ip } })).status).toBe(200);
    expect((await post('sign-out', csrf)).status).toBe(200);
    expect((await post('token', csrf)).status).toBe(401);
  });
});
