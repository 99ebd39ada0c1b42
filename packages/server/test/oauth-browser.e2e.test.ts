import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { CALLBACK, pkcePair, registerClient } from './helpers/oauth.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = fileURLToPath(new URL('../../../.test-output/screenshots/', import.meta.url));
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.log(`skipping OAuth browser test: ${CHROMIUM} is missing (apt-get install -y chromium)`);

/** A real browser through the sign-in and consent pages, by keyboard and by clicking; screenshots for people to look at. */
describe.skipIf(!hasChromium)('OAuth pages in a real browser', () => {
  let t: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    t = await startTestServer();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function newPage(viewport = { width: 1280, height: 860 }, colorScheme: 'light' | 'dark' = 'light') {
    const context = await browser.newContext({ viewport, colorScheme, extraHTTPHeaders: { 'x-forwarded-for': nextIp() } });
    const page = await context.newPage();
    // Nothing listens at the client's redirect URI: the browser arriving there is the result.
    await page.route(`${new URL(CALLBACK).origin}/**`, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the app' }));
    return page;
  }

  async function authorizeUrl(scope = 'read:code write:code') {
    const developer = await registerUser(t.url, { ip: nextIp() });
    const client = await registerClient(t.url, developer.token, { name: 'Acme Docs', redirect_uris: [CALLBACK] });
    const pkce = await pkcePair();
    const query = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: CALLBACK, scope, state: 'browser-state', code_challenge: pkce.challenge, code_challenge_method: 'S256' });
    return { url: `${t.url}/oauth/authorize?${query}`, client, pkce };
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true });

  it('signs in by keyboard, allows by clicking, and lands back at the client with a code that works', async () => {
    const person = await registerUser(t.url, { ip: nextIp(), name: 'Ada Lovelace' });
    const { url, client, pkce } = await authorizeUrl();
    const page = await newPage();
    await page.goto(url);
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign in');
    expect(await page.title()).toContain('Acme Docs');
    await shot(page, 'oauth-sign-in');

    // The email field has focus on arrival; Tab reaches the password; Enter submits.
    await page.keyboard.type(person.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type('not the password');
    await page.keyboard.press('Enter');
    await page.waitForLoadState();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Wrong email or password');
    expect(await page.getByLabel('Email').inputValue()).toBe(person.email);
    await shot(page, 'oauth-sign-in-error');

    await page.getByLabel('Password').fill(person.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Acme Docs wants to access your Codeloom account');
    const scopes = await page.getByRole('list', { name: /will be able to/ }).getByRole('listitem').allTextContents();
    expect(scopes.map((s) => s.trim().split(/\n|(?<=code)(?=[A-Z])/)[0])).toEqual(['See your code', 'Generate and change code']);
    await expect(page.getByText(person.email).isVisible()).resolves.toBe(true);
    await shot(page, 'oauth-consent');

    const [callback] = await Promise.all([
      page.waitForRequest((r) => r.url().startsWith(CALLBACK)),
      page.getByRole('button', { name: 'Allow' }).click(),
    ]);
    const back = new URL(callback.url());
    expect(back.searchParams.get('state')).toBe('browser-state');
    const tokens = await request(`${t.url}/oauth/token`, {
      raw: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: CALLBACK, code_verifier: pkce.verifier, client_id: client.client_id, client_secret: client.client_secret! }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': nextIp() },
    });
    expect(tokens.status, tokens.text).toBe(200);
  });

  it('Deny by keyboard returns access_denied; the pages fit a phone in dark mode; a bad redirect URI shows an error page', async () => {
    const person = await registerUser(t.url, { ip: nextIp() });
    const { url, client } = await authorizeUrl('read:code');
    const page = await newPage({ width: 390, height: 844 }, 'dark');
    await page.goto(url);
    await page.getByLabel('Email').fill(person.email);
    await page.getByLabel('Password').fill(person.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Deny' }).waitFor();
    await shot(page, 'oauth-consent-phone-dark');
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);

    await page.getByRole('button', { name: 'Deny' }).focus();
    const [callback] = await Promise.all([page.waitForRequest((r) => r.url().startsWith(CALLBACK)), page.keyboard.press('Enter')]);
    expect(Object.fromEntries(new URL(callback.url()).searchParams)).toMatchObject({ error: 'access_denied', state: 'browser-state' });

    const bad = await newPage();
    const response = await bad.goto(`${t.url}/oauth/authorize?response_type=code&client_id=${client.client_id}&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`);
    expect(response!.status()).toBe(400);
    expect(bad.url()).toContain('/oauth/authorize');
    await expect(bad.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Unregistered return address');
    await shot(bad, 'oauth-error');
  });
});
