/**
 * The Models page of the dashboard and the first run (issue 25 items 2 and 5), in a real browser against a
 * real server: a fresh server says the playground's only model is the template `sandbox` and links to the
 * Models page, which explains how to connect Ollama, vLLM, llama.cpp, OpenAI and Anthropic; the administrator
 * adds a deployment there (a loopback fake), tests it with the Test button (OK, then a failure shown), and the
 * model shows in the playground; another account sees no deployments. An axe scan and screenshots.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser } from './helpers/http.js';
import { axeSerious, hasChromium, launchBrowser, shot, CHROMIUM } from './helpers/browser.js';
import { startOpenAIFake, type FakeVendor } from './fakes/openai-fake.js';

if (!hasChromium) console.log(`skipping dashboard models browser test: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.skipIf(!hasChromium)('dashboard: models and deployments in a real browser', () => {
  let t: TestServer;
  let fake: FakeVendor;
  let browser: Browser;
  let context: BrowserContext | undefined;
  let page: Page;

  beforeAll(async () => {
    const { buildWeb, webBuildNeeded } = await import('../../web/build.mjs');
    if (webBuildNeeded()) await buildWeb({ quiet: true });
    fake = await startOpenAIFake({ record: true });
    t = await startTestServer();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await fake?.close();
  });

  const heading = () => page.getByRole('heading', { level: 1 });

  async function signIn(u: { email: string; password: string }, ip: string) {
    await context?.close();
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, timezoneId: 'UTC', extraHTTPHeaders: { 'x-forwarded-for': ip } });
    page = await context.newPage();
    await page.goto(`${t.url}/dashboard/sign-in`);
    await expect.poll(() => heading().textContent(), { timeout: 5000 }).toBe('Sign in to Codeloom');
    await page.getByLabel('Email', { exact: true }).fill(u.email);
    await page.getByLabel('Password', { exact: true }).fill(u.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => heading().textContent(), { timeout: 5000 }).toBe('Playground');
  }

  it('first run: the playground says sandbox is the template and links to the Models page, which explains how to connect models', async () => {
    const ip = nextIp();
    const admin = await registerUser(t.url, { ip, name: 'Admin' }); // the first account: an administrator
    await signIn(admin, ip);
    await expect.poll(() => page.getByTestId('sandbox-note').textContent(), { timeout: 5000 }).toMatch(/template model.*not AI/);
    await page.getByRole('link', { name: 'Connect a real model' }).click();
    await expect.poll(() => heading().textContent(), { timeout: 5000 }).toBe('Models');
    const examples = await page.getByTestId('example').allTextContents();
    for (const name of ['Ollama', 'vLLM', 'llama.cpp', 'OpenAI', 'Anthropic']) expect(examples.join('\n')).toContain(name);
    expect(examples.join('\n')).toContain('http://127.0.0.1:11434/v1');
    await expect.poll(() => page.getByTestId('model-list').textContent(), { timeout: 5000 }).toMatch(/sandbox.*template model/);
    const violations = await axeSerious(page);
    await shot(page, 'dashboard-models-empty');
    expect(violations).toEqual([]);

    // Add a deployment through the form (a bad URL first: the server's field error is shown).
    await page.getByRole('button', { name: 'Use Ollama' }).click();
    expect(await page.getByLabel('Base URL').inputValue()).toBe('http://127.0.0.1:11434/v1');
    await page.getByLabel('Name', { exact: true }).fill('gpu box');
    await page.getByLabel('Base URL').fill('ftp://nowhere');
    await page.getByLabel('Model id').fill('coder');
    await page.getByRole('button', { name: 'Add deployment' }).click();
    await expect.poll(() => page.getByText(/\/base_url/).count(), { timeout: 5000 }).toBeGreaterThan(0);
    await page.getByLabel('Base URL').fill(`${fake.url}/v1`);
    await page.getByLabel('API key').fill('sk-browser-secret');
    await page.getByLabel('Upstream name').fill('coder-up');
    await page.getByRole('button', { name: 'Add deployment' }).click();
    const row = page.getByTestId('deployment').filter({ hasText: 'gpu box' });
    await expect.poll(() => row.count(), { timeout: 5000 }).toBe(1);
    expect(await row.textContent()).toContain('key set');
    expect(await page.content()).not.toContain('sk-browser-secret');

    // Test: OK with the latency; then a failing upstream is shown as failed.
    await row.getByRole('button', { name: 'Test gpu box' }).click();
    await expect.poll(() => row.getByTestId('test-result').textContent(), { timeout: 5000 }).toMatch(/^OK: coder answered in \d+ ms/);
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: 'coder-up', max_tokens: 1 });
    expect(fake.requests.at(-1)!.headers.authorization).toBe('Bearer sk-browser-secret');
    fake.script({ failNext: { count: 1, status: 503 } });
    await row.getByRole('button', { name: 'Test gpu box' }).click();
    await expect.poll(() => row.getByTestId('test-result').textContent(), { timeout: 5000 }).toMatch(/^Failed: /);
    await expect.poll(() => row.getByTestId('health').textContent(), { timeout: 5000 }).toMatch(/Healthy/);
    await shot(page, 'dashboard-models-deployment');

    // The playground offers the model now, without the template note.
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Playground', exact: true }).click();
    await expect.poll(() => heading().textContent(), { timeout: 5000 }).toBe('Playground');
    await expect.poll(() => page.locator('#model option').allTextContents(), { timeout: 5000 }).toContain('coder (default)');
    expect(await page.getByTestId('sandbox-note').count()).toBe(0);
  });

  it('another account sees the models but no deployments', async () => {
    const ip = nextIp();
    const other = await registerUser(t.url, { ip, name: 'Member' });
    await signIn(other, ip);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Models', exact: true }).click();
    await expect.poll(() => heading().textContent(), { timeout: 5000 }).toBe('Models');
    await expect.poll(() => page.getByText('Deployments are managed by the server\'s administrators.').count(), { timeout: 5000 }).toBe(1);
    expect(await page.getByTestId('deployment').count()).toBe(0);
    expect(await page.getByTestId('model-list').textContent()).toContain('coder');
  });
});
