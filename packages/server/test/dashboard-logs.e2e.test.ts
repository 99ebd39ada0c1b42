/**
 * The Logs page of the dashboard, in a real browser against a real server: the organization's model calls
 * (made over the API: a priced upstream call, a failed one, a fallback, a sandbox call) listed newest first;
 * the status filter; the detail drawer with timing (queued, time to first token, total), the fallback taken,
 * the deployment, the cost and the redacted bodies; Escape closes it. An axe scan and screenshots at 1280 and 375 px.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { axeSerious, hasChromium, launchBrowser, shot, CHROMIUM } from './helpers/browser.js';

if (!hasChromium) console.log(`skipping dashboard logs browser test: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.skipIf(!hasChromium)('dashboard: logs in a real browser', () => {
  let t: TestServer;
  let fake: FakeVendor;
  let browser: Browser;
  let context: BrowserContext | undefined;
  let page: Page;

  beforeAll(async () => {
    const { buildWeb, webBuildNeeded } = await import('../../web/build.mjs');
    if (webBuildNeeded()) await buildWeb({ quiet: true });
    fake = await startOpenAIFake({ script: { reply: 'An answer from upstream.' } });
    t = await startTestServer({
      env: {
        OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-test,gpt-flaky', CODELOOM_DEFAULT_MODEL: 'sandbox',
        CODELOOM_UPSTREAM_RETRIES: '0', CODELOOM_MODEL_FALLBACKS: 'gpt-flaky=sandbox', CODELOOM_MODEL_PRICES: JSON.stringify({ 'gpt-test': { input: 1, output: 2 } }),
        CODELOOM_LOG_BODIES: 'redacted',
      },
    });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await context?.close();
    await t?.close();
    await fake?.close();
  });

  const heading = () => page.getByRole('heading', { level: 1 });

  async function capture(name: string) {
    const violations = await axeSerious(page);
    await shot(page, `dashboard-${name}`);
    await page.setViewportSize({ width: 375, height: 800 });
    await shot(page, `dashboard-${name}-375`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    await page.setViewportSize({ width: 1280, height: 860 });
    expect(overflow, `${name} scrolls sideways at 375 px`).toBeLessThanOrEqual(0);
    expect(violations, `${name}: serious or critical axe violations`).toEqual([]);
  }

  it('lists the calls, filters them, and shows one call\'s timing, fallback, deployment, cost and redacted body in a drawer', async () => {
    const ip = nextIp();
    const u = await registerUser(t.url, { ip, name: 'Log Reader' });
    const calls = [
      { prompt: 'priced call, mail me at ann@example.com', model: 'gpt-test' },
      { prompt: 'sandbox call', model: 'sandbox' },
    ];
    for (const body of calls) expect((await request(`${t.url}/api/v1/generate`, { token: u.token, body: { ...body, max_tokens: 200 } })).status).toBe(200);
    fake.script({ failNext: { count: 1, status: 500 } });
    expect((await request(`${t.url}/api/v1/generate`, { token: u.token, body: { prompt: 'this one fails', model: 'gpt-test', max_tokens: 50 } })).status).toBe(502);
    fake.script({ failNext: { count: 1, status: 503 } });
    expect((await request(`${t.url}/api/v1/generate`, { token: u.token, body: { prompt: 'falls back', model: 'gpt-flaky', max_tokens: 200 } })).status).toBe(200);
    await expect.poll(async () => (await request(`${t.url}/api/v1/logs`, { token: u.token })).body.pagination.total).toBe(4);

    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, timezoneId: 'UTC', extraHTTPHeaders: { 'x-forwarded-for': ip } });
    page = await context.newPage();
    await page.goto(`${t.url}/dashboard/sign-in`);
    await expect.poll(() => heading().textContent()).toBe('Sign in to Codeloom');
    await page.getByLabel('Email', { exact: true }).fill(u.email);
    await page.getByLabel('Password', { exact: true }).fill(u.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => heading().textContent()).toBe('Playground');
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Logs', exact: true }).click();
    await expect.poll(() => heading().textContent()).toBe('Logs');

    const rows = page.getByTestId('log-row');
    await expect.poll(() => rows.count()).toBe(4);
    // Newest first: the fallback, then the failure, the sandbox call, the priced call.
    expect(await rows.nth(0).textContent()).toMatch(/sandbox.*fallback from gpt-flaky.*succeeded/);
    expect(await rows.nth(1).textContent()).toMatch(/gpt-test.*failed.*upstream_error/);
    expect(await rows.nth(3).textContent()).toMatch(/gpt-test.*\/api\/v1\/generate.*succeeded.*\$0\.000/);
    await capture('logs');

    // The status filter.
    await page.getByLabel('Status', { exact: true }).selectOption('failed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('upstream_error');
    await page.getByLabel('Status', { exact: true }).selectOption('');
    await page.getByLabel('Model', { exact: true }).fill('gpt-test');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => rows.count()).toBe(2);
    await page.getByLabel('Model', { exact: true }).fill('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => rows.count()).toBe(4);

    // The fallback's drawer: timing, the fallback taken, the deployment, the cost.
    await rows.nth(0).getByRole('button', { name: /Details/ }).click();
    const drawer = page.getByRole('dialog');
    await expect.poll(() => drawer.isVisible()).toBe(true);
    const facts = drawer.getByRole('definition');
    await expect.poll(() => drawer.textContent()).toContain('Time to first token');
    const text = (await drawer.textContent())!;
    expect(text).toMatch(/Queued\s*\d+ ms/);
    expect(text).toMatch(/Time to first token\s*\d+ ms/);
    expect(text).toMatch(/Total\s*\d+ ms/);
    expect(text).toContain('from gpt-flaky to sandbox');
    expect(text).toMatch(/Deployment\s*default/);
    expect(text).toMatch(/Cost\s*\$0\.000000/);
    expect(await facts.count()).toBeGreaterThanOrEqual(10);
    expect(await drawer.getByRole('img', { name: /Queued .* first token at .* total/ }).count()).toBe(1);
    await capture('logs-drawer');
    await page.keyboard.press('Escape');
    await expect.poll(() => drawer.count()).toBe(0);

    // The priced call's drawer: its cost, and the body with the email masked.
    await rows.nth(3).getByRole('button', { name: /Details/ }).click();
    await expect.poll(() => page.getByRole('dialog').textContent()).toContain('priced call');
    const priced = (await page.getByRole('dialog').textContent())!;
    expect(priced).not.toContain('ann@example.com');
    expect(priced).toContain('[EMAIL]');
    expect(priced).toMatch(/Cost\s*\$0\.0000[1-9]/);
    await page.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
  });
});
