/**
 * Passwords and the session in the dashboard (issue 26 items 3, 4 and 7), in a real browser against a real
 * server and a real SMTP server:
 * - Account → Password: a wrong current password and a confirmation that differs are said plainly; a change
 *   signs out the account's other sessions while the page stays signed in;
 * - sign-in → "Forgot password?" → the reset link arrives by mail → the reset page sets the new password
 *   (every session ends; sign in again with it); the same link a second time is refused in words;
 * - a closed server offers no sign-up (and, without mail, says who resets passwords), yet its first account
 *   is made in the dashboard; a refused domain gets the server's signup_closed message;
 * - a tab whose renewal timer never fires (a sleeping laptop) with two-second access tokens: the Account
 *   page's call answered token_expired is repeated once with a fresh token, and Generate, whose WebSocket
 *   would be refused, renews the token first and completes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { axeSerious, hasChromium, launchBrowser, shot, CHROMIUM } from './helpers/browser.js';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.js';

if (!hasChromium) console.log(`skipping dashboard password browser tests: ${CHROMIUM} is missing (apt-get install -y chromium)`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!hasChromium)('dashboard: passwords and the session in a real browser', () => {
  let smtp: SmtpSink;
  let t: TestServer;
  /** Signed-up closed, with two-second access tokens. */
  let short: TestServer;
  let shortUser: { email: string; password: string };
  /** CODELOOM_SIGNUP=domains (example.com). */
  let domains: TestServer;
  /** Closed and empty: its first account is made in the dashboard. */
  let fresh: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const a11y: Record<string, string[]> = {};

  beforeAll(async () => {
    const { buildWeb, webBuildNeeded } = await import('../../web/build.mjs');
    if (webBuildNeeded()) await buildWeb({ quiet: true });
    smtp = await startSmtpSink();
    [t, short, domains, fresh] = await Promise.all([
      startTestServer({ env: { CODELOOM_SMTP_URL: smtp.smtpUrl } }),
      startTestServer({ env: { CODELOOM_SIGNUP: 'closed', CODELOOM_ACCESS_TOKEN_TTL: '2' } }),
      startTestServer({ env: { CODELOOM_SIGNUP: 'domains', CODELOOM_SIGNUP_DOMAINS: 'example.com' } }),
      startTestServer({ env: { CODELOOM_SIGNUP: 'closed' } }),
    ]);
    await registerUser(domains.url, { ip: nextIp() });
    // The first account of an empty database is always allowed, even on a closed server.
    shortUser = await registerUser(short.url, { ip: nextIp() });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await Promise.all([t?.close(), short?.close(), domains?.close(), fresh?.close()]);
    await smtp?.close();
  });

  const heading = () => page.locator('h1');

  async function newPage(ip = nextIp(), init?: () => void) {
    await context?.close();
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, extraHTTPHeaders: { 'x-forwarded-for': ip } });
    if (init) await context.addInitScript(init);
    page = await context.newPage();
  }

  async function signIn(base: string, email: string, password: string) {
    await page.goto(`${base}/dashboard/sign-in`);
    await expect.poll(() => heading().textContent()).toBe('Sign in to Codeloom');
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => heading().textContent()).toBe('Playground');
  }

  it('Account: changes the password, says what is wrong, and signs the other sessions out while this one stays', async () => {
    const ip = nextIp();
    const u = await registerUser(t.url, { ip });
    await newPage(ip);
    await signIn(t.url, u.email, u.password);
    await page.getByRole('link', { name: 'Account' }).click();
    await expect.poll(() => heading().textContent()).toBe('Account');
    const form = page.locator('form', { has: page.getByRole('button', { name: 'Change password' }) });

    await form.getByLabel('Current password').fill('not my password');
    await form.getByLabel('New password', { exact: true }).fill('a brand new passphrase');
    await form.getByLabel('Confirm new password').fill('a brand new passphrase');
    await form.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toBe('The current password is wrong.');

    await form.getByLabel('Current password').fill(u.password);
    await form.getByLabel('Confirm new password').fill('something else entirely');
    await form.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toBe('The new password and its confirmation differ.');

    await form.getByLabel('Confirm new password').fill('a brand new passphrase');
    await form.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => form.getByRole('status').textContent()).toContain('Password changed. Your other sessions were signed out');
    a11y.account = await axeSerious(page);
    await shot(page, 'dashboard-account-password');

    // The API session made at registration has ended; this page goes on (a reload keeps it signed in).
    expect((await request(`${t.url}/api/v1/auth/verify`, { token: u.token })).status).toBe(401);
    await page.reload();
    await expect.poll(() => heading().textContent()).toBe('Account');
    await expect.poll(() => page.getByText(u.email).first().isVisible()).toBe(true);
    expect((await request(`${t.url}/api/v1/auth/login`, { body: { email: u.email, password: 'a brand new passphrase' }, headers: { 'x-forwarded-for': nextIp() } })).status).toBe(200);
  });

  it('Forgot password: the emailed link opens the reset page, sets the password (every session ends), and works once', async () => {
    const ip = nextIp();
    const u = await registerUser(t.url, { ip });
    await newPage(ip);
    await signIn(t.url, u.email, u.password);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => heading().textContent()).toBe('Sign in to Codeloom');

    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await expect.poll(() => heading().textContent()).toBe('Reset your password');
    a11y.forgot = await axeSerious(page);
    const mark = smtp.mails.length;
    await page.getByLabel('Email', { exact: true }).fill(u.email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('If an account uses this address');

    const mail = await smtp.waitFor(u.email, 5_000, mark);
    const link = /http:\/\/codeloom\.test(\/dashboard\/reset-password#token=clpr_[A-Za-z0-9_-]+)/.exec(mail.text)?.[1];
    expect(link, mail.text).toBeDefined();
    // The test server's public URL is the issuer (http://codeloom.test); the same path on the real address.
    await page.goto(`${t.url}${link}`);
    await expect.poll(() => heading().textContent()).toBe('Choose a new password');
    expect(new URL(page.url()).hash).toBe(''); // the token left the address bar
    a11y.reset = await axeSerious(page);
    await shot(page, 'dashboard-reset-password');
    await page.getByLabel('New password', { exact: true }).fill('reset to this passphrase');
    await page.getByLabel('Confirm new password').fill('reset to this passphrase');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await expect.poll(() => heading().textContent()).toBe('Sign in to Codeloom');
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Your password was changed');

    expect((await request(`${t.url}/api/v1/auth/verify`, { token: u.token })).status).toBe(401);
    await signIn(t.url, u.email, 'reset to this passphrase');

    // The same link again: refused in words, with the way to a new one.
    await page.goto(`${t.url}${link}`);
    await expect.poll(() => heading().textContent()).toBe('Choose a new password');
    await page.getByLabel('New password', { exact: true }).fill('and yet another one');
    await page.getByLabel('Confirm new password').fill('and yet another one');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('unknown, expired or was already used');
    await expect.poll(() => page.getByRole('link', { name: 'Ask for a new link' }).isVisible()).toBe(true);
  });

  it('sign-up modes: a closed server offers no sign-up (nor a reset without mail), its first account can still be made, and a refused domain gets the server\'s message', async () => {
    // Closed, with an account: the sign-in page offers no sign-up, and (no mail server) says who resets passwords.
    await newPage();
    await page.goto(`${short.url}/dashboard/sign-in`);
    await expect.poll(() => page.getByText('Forgot your password? Ask an administrator to reset it.').isVisible()).toBe(true);
    expect(await page.getByRole('link', { name: 'Create an account' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Forgot password?' }).count()).toBe(0);
    await page.goto(`${short.url}/dashboard/sign-up`);
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Sign-up is closed on this server. Ask an administrator for an account.');
    expect(await page.getByRole('button', { name: 'Create account' }).count()).toBe(0);
    await shot(page, 'dashboard-signup-closed');

    // Closed and empty: the first account is made from the dashboard.
    await page.goto(`${fresh.url}/dashboard/sign-up`);
    await expect.poll(() => page.getByText('This server has no account yet').isVisible()).toBe(true);
    await page.getByLabel('Name').fill('First Admin');
    await page.getByLabel('Email', { exact: true }).fill('admin@example.com');
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => heading().textContent()).toBe('API keys');

    // Domains: the form is offered; an address elsewhere gets the server's signup_closed message.
    await newPage();
    await page.goto(`${domains.url}/dashboard/sign-up`);
    await expect.poll(() => heading().textContent()).toBe('Create your Codeloom account');
    await page.getByLabel('Name').fill('Late Comer');
    await page.getByLabel('Email', { exact: true }).fill(`late-${Date.now()}@example.org`);
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('limited to email addresses at allowed domains (CODELOOM_SIGNUP=domains)');
    a11y.signup = await axeSerious(page);
  });

  it('a tab whose renewal timer slept: a call answered token_expired is repeated with a fresh token, and Generate renews before connecting', async () => {
    const u = shortUser;
    // The page's long timers never fire, as on a laptop that slept: nothing renews the two-second token behind its back.
    await newPage(nextIp(), () => {
      const real = window.setTimeout;
      window.setTimeout = ((fn: TimerHandler, ms?: number, ...args: unknown[]) => ((ms ?? 0) >= 4_000 ? 0 : real(fn, ms, ...args))) as typeof window.setTimeout;
    });
    const seen: Array<{ path: string; status: number; code?: string }> = [];
    page.on('response', (res) => {
      const path = new URL(res.url()).pathname;
      if (path.startsWith('/api/v1/') || path.startsWith('/dashboard/session/')) {
        void res.json().then((b: { code?: string }) => seen.push({ path, status: res.status(), code: b?.code }), () => seen.push({ path, status: res.status() }));
      }
    });
    await signIn(short.url, u.email, u.password);

    // REST: the Account page's profile call, made with an expired token, is answered once more with a fresh one.
    await sleep(2_500);
    await page.getByRole('link', { name: 'Account' }).click();
    await expect.poll(() => page.getByText('User id').isVisible()).toBe(true);
    const profile = () => seen.filter((s) => s.path === '/api/v1/user/profile');
    await expect.poll(() => profile().map((s) => s.status)).toEqual([401, 200]);
    expect(profile()[0]!.code).toBe('token_expired');

    // WebSocket: Generate after the token ran out again renews first, then streams to the end.
    await page.getByRole('link', { name: 'Playground' }).click();
    await expect.poll(() => heading().textContent()).toBe('Playground');
    await sleep(2_500);
    const renewals = seen.filter((s) => s.path === '/dashboard/session/token').length;
    await page.getByLabel('Prompt').fill('REST API for todos');
    await page.getByRole('button', { name: 'Generate' }).click();
    await expect.poll(() => page.locator('[data-phase]').getAttribute('data-phase'), { timeout: 20_000 }).toBe('done');
    await expect.poll(() => seen.filter((s) => s.path === '/dashboard/session/token').length).toBeGreaterThan(renewals);
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  afterAll(() => {
    for (const [name, violations] of Object.entries(a11y)) expect(violations, `axe on ${name}`).toEqual([]);
  });
});
