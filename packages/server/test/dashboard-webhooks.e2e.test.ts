/**
 * The Webhooks page of the dashboard, in a real browser against a real server: the server's reason for a
 * refused (private) URL under the field; a webhook added with chosen events, its secret shown once; a run
 * (over the API) delivered to a real loopback receiver and shown in the recent deliveries table; delete after
 * a confirmation. An axe scan and screenshots at 1280 and 375 px.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { axeSerious, hasChromium, launchBrowser, shot, CHROMIUM } from './helpers/browser.js';
import { eventually, signatureValid, startWebhookReceiver } from './helpers/webhook-receiver.js';

if (!hasChromium) console.log(`skipping dashboard webhooks browser test: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.skipIf(!hasChromium)('dashboard: webhooks in a real browser', () => {
  let strict: TestServer;
  let open: TestServer;
  let browser: Browser;
  let context: BrowserContext | undefined;
  let page: Page;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    const { buildWeb, webBuildNeeded } = await import('../../web/build.mjs');
    if (webBuildNeeded()) await buildWeb({ quiet: true });
    receiver = await startWebhookReceiver();
    [strict, open] = await Promise.all([startTestServer(), startTestServer({ env: { CODELOOM_WEBHOOK_ALLOW_PRIVATE: 'true' } })]);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all([strict?.close(), open?.close()]);
    await receiver?.close();
  });

  const heading = () => page.getByRole('heading', { level: 1 });

  /** A fresh browser context signed in (through the sign-in page) as a user registered over the API, on the Webhooks page. */
  async function signedIn(t: TestServer) {
    await context?.close();
    const ip = nextIp();
    const u = await registerUser(t.url, { ip, name: 'Hook Owner' });
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, timezoneId: 'UTC', extraHTTPHeaders: { 'x-forwarded-for': ip } });
    page = await context.newPage();
    await page.goto(`${t.url}/dashboard/sign-in`);
    await expect.poll(() => heading().textContent()).toBe('Sign in to Codeloom');
    await page.getByLabel('Email', { exact: true }).fill(u.email);
    await page.getByLabel('Password', { exact: true }).fill(u.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => heading().textContent()).toBe('Playground');
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Webhooks', exact: true }).click();
    await expect.poll(() => heading().textContent()).toBe('Webhooks');
    return u;
  }

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

  it('a private URL is refused with the server\'s reason under the field', async () => {
    await signedIn(strict);
    await page.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/hook');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const message = page.locator('#webhook-url-error');
    await expect.poll(() => message.textContent()).toMatch(/loopback address.*CODELOOM_WEBHOOK_ALLOW_PRIVATE=true/);
    expect(await page.getByLabel('Endpoint URL').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByTestId('webhook').count()).toBe(0);
  });

  it('adds a webhook (secret shown once), shows a run\'s delivery in its recent deliveries, and deletes it after a confirmation', async () => {
    const u = await signedIn(open);
    await expect.poll(() => page.getByText('No webhooks yet.').count()).toBe(1);
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    // run.succeeded, run.failed and run.cancelled are ticked by default; add the budget alerts, drop run.failed.
    await page.getByRole('checkbox', { name: /budget\.exceeded/ }).check();
    await page.getByRole('checkbox', { name: /run\.failed/ }).uncheck();
    await page.getByLabel('Description (optional)').fill('Deploy bot');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const secretBox = page.getByRole('region', { name: /Signing secret of/ });
    await expect.poll(() => secretBox.count()).toBe(1);
    const secret = (await page.getByTestId('secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    const card = page.getByTestId('webhook');
    await expect.poll(() => card.count()).toBe(1);
    expect(await card.textContent()).toContain('Deploy bot');
    const listed = (await request(`${open.url}/api/v1/webhooks`, { token: u.token })).body.data;
    expect(listed).toMatchObject([{ url: receiver.url, events: ['run.succeeded', 'run.cancelled', 'budget.exceeded'], description: 'Deploy bot' }]);
    await capture('webhooks-secret');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('secret').count()).toBe(0);

    // A run over the API: its run.succeeded reaches the receiver, signed with the secret the page showed.
    const wf = await request(`${open.url}/api/v1/agents/create`, { token: u.token, body: { name: 'one', agents: [{ type: 'coder', model: 'sandbox' }] } });
    const run = await request(`${open.url}/api/v1/workflows/${wf.body.id}/execute`, { token: u.token, body: { task: 'add two numbers' } });
    expect(run.status).toBe(202);
    const [got] = await eventually(() => receiver.received.length > 0 && receiver.received, 'the delivery');
    expect(got!.json).toMatchObject({ type: 'run.succeeded', data: { id: run.body.id } });
    expect(signatureValid(secret, got!.headers['codeloom-signature'] as string, got!.body)).toBe(true);

    await page.getByRole('button', { name: 'Show deliveries' }).click();
    const row = page.getByTestId('delivery');
    await expect.poll(async () => {
      if ((await row.count()) === 0 || !/Delivered/.test((await row.first().textContent()) ?? '')) await page.getByRole('button', { name: 'Refresh' }).click();
      return row.first().textContent();
    }).toMatch(/run\.succeeded.*Delivered.*1.*200/);
    await capture('webhooks-deliveries');

    await page.getByRole('button', { name: 'Delete webhook' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this webhook?' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Delete webhook' }).click();
    await expect.poll(() => page.getByText('No webhooks yet.').count()).toBe(1);
    expect((await request(`${open.url}/api/v1/webhooks`, { token: u.token })).body.data).toEqual([]);
  });
});
