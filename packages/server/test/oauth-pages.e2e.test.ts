import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { awayFromWindowEnd } from './helpers/limit-windows.js';
import { CALLBACK, FormBrowser, formFields, pkcePair, registerClient } from './helpers/oauth.js';

/** The sign-in and consent pages as a browser meets them: CSRF, the login throttle, sessions, escaping. */
describe('OAuth sign-in and consent pages', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t?.close(); });

  async function start(clientName = 'Acme Docs') {
    const ip = nextIp();
    const developer = await registerUser(t.url, { ip });
    const person = await registerUser(t.url, { ip: nextIp() });
    const client = await registerClient(t.url, developer.token, { name: clientName, redirect_uris: [CALLBACK] });
    const { challenge } = await pkcePair();
    const url = `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: CALLBACK, state: 'st', code_challenge: challenge, code_challenge_method: 'S256' })}`;
    const browser = new FormBrowser(t.url, ip);
    const page = await browser.open(url);
    expect(page.status).toBe(200);
    return { ip, person, client, url, browser, page, fields: formFields(page.html, '/oauth/sign-in') };
  }
  const sessionCookie = (b: FormBrowser) => [...b.cookies.keys()].some((k) => k.endsWith('codeloom_session'));

  it('refuses a sign-in without the CSRF token, with another token, or from another origin, and starts no session', async () => {
    const s = await start();
    const { csrf_token: token, ...rest } = s.fields;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const attempts = [
      { form: { ...rest, email: s.person.email, password: s.person.password }, headers: {} },
      { form: { ...rest, csrf_token: 'x'.repeat(43), email: s.person.email, password: s.person.password }, headers: {} },
    ];
    for (const attempt of attempts) {
      const res = await s.browser.open('/oauth/sign-in', attempt.form);
      expect(res.status).toBe(403);
      expect(res.html).toContain('This form expired');
      expect(sessionCookie(s.browser)).toBe(false);
    }
    const cookie = [...s.browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const forged = await fetch(`${t.url}/oauth/sign-in`, {
      method: 'POST', redirect: 'manual', body: new URLSearchParams({ ...s.fields, email: s.person.email, password: s.person.password }),
      headers: { cookie, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': s.ip },
    });
    expect(forged.status).toBe(403);
    expect(forged.headers.getSetCookie().some((c) => c.includes('codeloom_session='))).toBe(false);
  });

  it('a forged consent post is shown the page again instead of issuing a code', async () => {
    const s = await start();
    const signedIn = await s.browser.open('/oauth/sign-in', { ...s.fields, email: s.person.email, password: s.person.password });
    const consent = await s.browser.open(signedIn.location!);
    const fields = formFields(consent.html, '/oauth/authorize');
    expect(fields.csrf_token).not.toBe(s.fields.csrf_token); // rotated at sign-in
    const forged = await s.browser.open('/oauth/authorize', { ...fields, csrf_token: s.fields.csrf_token!, decision: 'allow' });
    expect(forged.status).toBe(403);
    expect(forged.location).toBeNull();
    expect(forged.html).toContain('confirm your choice again');
    const real = await s.browser.open('/oauth/authorize', { ...formFields(forged.html, '/oauth/authorize'), decision: 'allow' });
    expect(real.status).toBe(303);
    expect(new URL(real.location!).searchParams.get('code')).toMatch(/^clo_ac_/);
  });

  it('shares the login throttle: 5 wrong passwords on the page, then 429 on the page and on the JSON login', async () => {
    const s = await start();
    await awayFromWindowEnd(5, 900); // the throttle's 15-minute windows are fixed
    for (let i = 0; i < 5; i++) {
      const res = await s.browser.open('/oauth/sign-in', { ...s.fields, email: s.person.email, password: `wrong-${i}-password` });
      expect(res.status).toBe(401);
      expect(res.html).toContain('Wrong email or password.');
      expect(res.html).toContain(`value="${s.person.email}"`);
    }
    const blocked = await s.browser.open('/oauth/sign-in', { ...s.fields, email: s.person.email, password: s.person.password });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(blocked.html).toContain('Too many failed sign-ins');
    const json = await request(`${t.url}/api/v1/auth/login`, { body: { email: s.person.email, password: s.person.password }, headers: { 'x-forwarded-for': nextIp() } });
    expect(json.status).toBe(429);
  });

  it('"Not you?" signs out and shows the sign-in form again; a session deleted server-side is gone', async () => {
    const s = await start();
    const signedIn = await s.browser.open('/oauth/sign-in', { ...s.fields, email: s.person.email, password: s.person.password });
    const consent = await s.browser.open(signedIn.location!);
    const out = await s.browser.open('/oauth/sign-out', formFields(consent.html, '/oauth/sign-out'));
    expect(out.status).toBe(303);
    expect(sessionCookie(s.browser)).toBe(false);
    const again = await s.browser.open(out.location!);
    expect(again.html).toContain('action="/oauth/sign-in"');

    const b2 = await s.browser.open('/oauth/sign-in', { ...formFields(again.html, '/oauth/sign-in'), email: s.person.email, password: s.person.password });
    await t.server.ctx.store.handle.db.deleteFrom('web_sessions').execute();
    const expired = await s.browser.open(b2.location!);
    expect(expired.html).toContain('action="/oauth/sign-in"');
  });

  it('escapes what applications and people type into the pages', async () => {
    const s = await start('<script>alert(1)</script> "Docs"');
    expect(s.page.html).not.toContain('<script>');
    expect(s.page.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &quot;Docs&quot;');
    const csp = s.page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('script-src');
    expect(s.page.headers.get('x-frame-options')).toBe('DENY');
  });
});
