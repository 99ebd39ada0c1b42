import { readFileSync } from 'node:fs';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { request } from './helpers/http.js';
import { axeSerious, hasChromium, launchBrowser, shot, CHROMIUM } from './helpers/browser.js';
import { startOpenAIFake, type FakeVendor } from './fakes/openai-fake.js';

if (!hasChromium) console.log(`skipping dashboard browser test: ${CHROMIUM} is missing (apt-get install -y chromium)`);

const FILES_REPLY = 'Here is the service.\n\n```typescript src/index.ts\nexport const answer = 42;\nconsole.log(answer);\n```\n\n```typescript src/lib/util.ts\nexport function twice(n: number) { return n * 2; }\n```\n';

/** The account dashboard in a real browser against a real server: the scenario, an axe scan and screenshots of every page. */
describe.skipIf(!hasChromium)('dashboard in a real browser', () => {
  let t: TestServer;
  let fake: FakeVendor;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const cspErrors: string[] = [];
  const a11y: Record<string, string[]> = {};

  beforeAll(async () => {
    const { buildWeb, webBuildNeeded } = await import('../../web/build.mjs');
    if (webBuildNeeded()) await buildWeb({ quiet: true });
    fake = await startOpenAIFake();
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-x', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_UPSTREAM_RETRIES: '0', CODELOOM_MODEL_PRICES: '{"gpt-test": {"input": 1000, "output": 1000}}' } });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, extraHTTPHeaders: { 'x-forwarded-for': nextIp() } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
    page = await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) cspErrors.push(m.text()); });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await fake?.close();
  });

  /** Screenshots at 1280 and 375 px wide, an axe scan, and no sideways scrolling on a phone. */
  async function capture(name: string) {
    a11y[name] = await axeSerious(page);
    await shot(page, `dashboard-${name}`);
    await page.setViewportSize({ width: 375, height: 800 });
    await shot(page, `dashboard-${name}-375`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    // What overflows: boxes past the right edge, and boxes whose own content (a long word) spills out of them.
    if (overflow > 0) console.log(name, overflow, await page.evaluate(() => [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 || (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === 'visible')).slice(0, 8).map((e) => `${e.tagName}.${e.className} right ${Math.round(e.getBoundingClientRect().right)} scroll ${e.scrollWidth}/${e.clientWidth}`)));
    await page.setViewportSize({ width: 1280, height: 860 });
    expect(overflow, `${name} scrolls sideways at 375 px`).toBeLessThanOrEqual(0);
  }

  const heading = () => page.getByRole('heading', { level: 1 });
  const go = async (link: string, title: string | RegExp) => {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: link, exact: true }).click();
    await expect.poll(() => heading().textContent()).toMatch(title);
  };

  it('signs up, creates a key shown once, generates live, stops, revokes the key and signs out', async () => {
    // / redirects to the dashboard, which asks to sign in; from there to sign-up.
    await page.goto(`${t.url}/`);
    await expect.poll(() => heading().textContent()).toBe('Sign in to Codeloom');
    await capture('sign-in');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await expect.poll(() => heading().textContent()).toBe('Create your Codeloom account');
    await capture('sign-up');
    const email = `dash-${Date.now()}@example.com`;
    await page.getByLabel('Name', { exact: true }).fill('Dana Dashboard');
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => heading().textContent()).toBe('API keys');

    // A production key with limits of its own: the secret (cl_live_…) shown once, with Copy.
    await page.getByLabel('Key name', { exact: true }).fill('ci');
    await page.getByLabel('Requests per minute', { exact: true }).fill('30');
    await page.getByLabel('Tokens per month', { exact: true }).fill('100000');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const secret = page.getByRole('region', { name: /Your new key/ });
    const key = (await secret.locator('code').textContent())!;
    expect(key).toMatch(/^cl_live_/);
    await secret.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => secret.getByRole('status').textContent()).toBe('Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    await capture('api-keys-new');
    expect((await request(`${t.url}/api/v1/auth/verify`, { token: key, headers: { 'x-forwarded-for': nextIp() } })).status).toBe(200);
    // One model call with the key, for the Usage page's per-key table.
    expect((await request(`${t.url}/api/v1/generate`, { token: key, headers: { 'x-forwarded-for': nextIp() }, body: { prompt: 'word counter', model: 'sandbox' } })).status).toBe(200);
    await secret.getByRole('button', { name: 'Done' }).click();
    const row = page.getByRole('row', { name: /ci/ });
    await expect.poll(() => row.textContent()).toContain(key.slice(0, 12));
    expect(await row.textContent()).toContain('30 requests/min · 100,000 tokens/month');
    // Shown once: after a reload (still signed in, by the cookie) the key's secret is nowhere on the page.
    await page.reload();
    await expect.poll(() => heading().textContent()).toBe('API keys');
    await expect.poll(() => page.getByRole('row', { name: /ci/ }).count()).toBe(1);
    expect(await page.content()).not.toContain(key);
    await capture('api-keys');

    // The playground: tokens arrive before the generation completes.
    await go('Playground', 'Playground');
    fake.script({ reply: FILES_REPLY, chunkDelayMs: 40 });
    await page.getByLabel('Prompt', { exact: true }).fill('A tiny TypeScript module');
    await page.getByLabel('Language', { exact: true }).selectOption('typescript');
    await page.getByLabel('Model', { exact: true }).selectOption('gpt-test');
    await page.getByRole('button', { name: 'Generate' }).click();
    const out = page.getByTestId('stream-output');
    // Checked in one look inside the page: tokens on screen while the status still says Generating.
    await page.waitForFunction(() => (document.querySelector('[data-testid="stream-output"]')?.textContent ?? '').length > 0
      && /^Generating/.test(document.querySelector('[data-phase]')?.textContent ?? ''), undefined, { timeout: 10_000 });
    await expect.poll(() => page.getByRole('status').filter({ hasText: /^Done/ }).count(), { timeout: 15_000 }).toBe(1);
    await page.getByRole('button', { name: 'src/lib/util.ts' }).click();
    await expect.poll(() => page.getByRole('figure').locator('figcaption').textContent()).toBe('src/lib/util.ts');
    expect(await page.locator('pre code.hljs .hljs-keyword').count()).toBeGreaterThan(0);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download zip' }).click()]);
    const zip = unzipSync(new Uint8Array(readFileSync((await download.path())!)));
    expect(Object.keys(zip).sort()).toEqual(['src/index.ts', 'src/lib/util.ts']);
    expect(strFromU8(zip['src/lib/util.ts']!)).toContain('return n * 2');
    await capture('playground');
    // Dark mode follows the system setting; highlighted code keeps its contrast there too.
    await page.emulateMedia({ colorScheme: 'dark' });
    a11y['playground-dark'] = await axeSerious(page);
    await shot(page, 'dashboard-playground-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    // A second, slow generation, stopped midway: the server aborts the model call.
    fake.script({ reply: 'word '.repeat(400), chunkDelayMs: 30 });
    await page.getByRole('button', { name: 'Generate' }).click();
    await expect.poll(async () => ((await out.textContent()) ?? '').length, { timeout: 10_000 }).toBeGreaterThan(10);
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: /^Stopped/ }).count()).toBe(1);
    await fake.waitForAborts(1);

    // Usage: a chart and tables from GET /api/v1/usage, per model and per key (the key's call, the session's).
    await go('Usage', 'Usage');
    await expect.poll(() => page.getByRole('group', { name: 'Usage by model' }).textContent()).toContain('gpt-test');
    const byKey = (await page.getByRole('group', { name: 'Usage by key' }).textContent())!;
    expect(byKey).toContain(`ci (${key.slice(0, 12)}`);
    expect(byKey).toContain('Session or OAuth (no key)');
    // Cost beside tokens: gpt-test is priced (1,000 USD per million tokens: a tenth of a cent a token), the sandbox is not.
    const byModel = (await page.getByRole('group', { name: 'Usage by model' }).textContent())!;
    expect(byModel).toContain('Cost (USD)');
    expect(byModel).toMatch(/gpt-test[\d,]+[\d—]+[\d,]+\$0\.(?!000000)\d{6}/);
    expect(byModel).toMatch(/sandbox[\d,]+[\d—]+[\d,]+\$0\.000000/);
    expect(await page.getByRole('definition').filter({ hasText: /^\$/ }).textContent()).toMatch(/^\$0\.(?!000000)\d{6}$/);
    await expect(page.getByRole('img', { name: /Tokens per day/ }).isVisible()).resolves.toBe(true);
    await capture('usage');

    // Projects: create one from a template, open one of its files.
    await go('Projects', 'Projects');
    await page.getByLabel('Project name').fill('todo service');
    await page.getByLabel('Template').selectOption('fastify-api');
    await page.getByRole('button', { name: 'Create project' }).click();
    await expect.poll(() => heading().textContent()).toBe('todo service');
    const firstFile = page.getByRole('list', { name: 'File tree' }).getByRole('button').first();
    const filePath = (await firstFile.getAttribute('aria-label'))!;
    await firstFile.click();
    await expect.poll(() => page.getByRole('figure').locator('figcaption').textContent()).toBe(filePath);
    expect(((await page.locator('pre code').textContent()) ?? '').length).toBeGreaterThan(0);
    await capture('project');
    // Paging: ten more projects (made with the key over the API) spill onto a second page of ten. The newest
    // has a 100-character name without a break: it must wrap, not push the page sideways on a phone.
    const longName = `bulk-${'W'.repeat(95)}`;
    for (let i = 1; i <= 10; i++) {
      const made = await request(`${t.url}/api/v1/projects`, { token: key, body: { name: i === 10 ? longName : `bulk ${i}` }, headers: { 'x-forwarded-for': nextIp() } });
      expect(made.status).toBe(201);
    }
    await go('Projects', 'Projects');
    const pager = page.getByRole('navigation', { name: 'Project pages' });
    await expect.poll(() => pager.textContent()).toContain('Page 1 of 2');
    await capture('projects');
    await pager.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => pager.textContent()).toContain('Page 2 of 2');
    await expect.poll(() => page.getByRole('link', { name: 'todo service' }).count()).toBe(1); // the oldest, last
    await pager.getByRole('button', { name: 'Previous page' }).click();
    await page.getByRole('link', { name: longName }).click();
    await expect.poll(() => heading().textContent()).toBe(longName);
    await capture('project-long-name');

    // Workflows: a two-step workflow (planner → coder), run and watched live until both steps succeed.
    await go('Workflows', 'Workflows');
    // The steps use the fake vendor with a pause between chunks, so the run is seen running, streaming, then done.
    fake.script({ reply: FILES_REPLY, chunkDelayMs: 25 });
    await page.getByLabel('Workflow name').fill('plan and build');
    await page.getByLabel('Model for every step').selectOption('gpt-test');
    await page.getByRole('button', { name: 'Create workflow' }).click();
    await expect.poll(() => page.getByLabel('Workflow', { exact: true }).textContent()).toContain('planner → coder');
    await page.getByLabel('Task').fill('REST API for todos');
    await page.getByRole('button', { name: 'Run workflow' }).click();
    await expect.poll(() => heading().textContent()).toMatch(/^Run run_/);
    const steps = page.getByRole('list', { name: 'Steps' }).getByRole('listitem');
    // In one look inside the page: step 1 running with streamed output while the run is running.
    await page.waitForFunction(() => document.querySelector('[aria-label="Step 1: planner, running"] pre')?.textContent
      && document.querySelector('[data-testid="run-status"]')?.textContent === 'running', undefined, { timeout: 20_000 });
    await expect.poll(() => steps.evaluateAll((items) => items.map((i) => i.getAttribute('aria-label'))), { timeout: 20_000 })
      .toEqual(['Step 1: planner, succeeded', 'Step 2: coder, succeeded']);
    await expect.poll(() => page.getByTestId('run-status').textContent()).toBe('succeeded');
    await capture('run');
    await go('Workflows', 'Workflows');
    await expect.poll(() => page.getByRole('group', { name: 'Runs table' }).textContent()).toContain('succeeded');
    await capture('workflows');

    // OAuth apps: register (secret once), edit the redirect URIs, delete.
    await go('OAuth apps', 'OAuth apps');
    await page.getByLabel('App name').fill('Acme Docs');
    await page.getByLabel('Redirect URIs').fill('https://docs.acme.example/callback');
    await page.getByRole('button', { name: 'Register app' }).click();
    const appSecret = page.getByRole('region', { name: /Client secret of “Acme Docs”/ });
    expect(await appSecret.locator('code').textContent()).toMatch(/\S{20,}/);
    await capture('oauth-apps-new');
    await appSecret.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Edit redirect URIs' }).click();
    await page.getByLabel('Redirect URIs of Acme Docs').fill('https://docs.acme.example/callback\nhttp://127.0.0.1:7777/cb');
    await page.getByRole('button', { name: 'Save redirect URIs' }).click();
    await expect.poll(() => page.getByRole('list', { name: 'Redirect URIs of Acme Docs' }).textContent()).toContain('http://127.0.0.1:7777/cb');
    await capture('oauth-apps');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete app' }).click();
    await expect.poll(() => page.getByText('No apps yet.').count()).toBe(1);

    // Account: profile, organization, plan, current rate-limit use.
    await go('Account', 'Account');
    await expect.poll(() => page.getByText('Dana Dashboard', { exact: true }).count()).toBe(1);
    await expect.poll(() => page.getByRole('meter').count()).toBe(1);
    await capture('account');

    // The environment switch: a sandbox key is a cl_test_ key, listed apart.
    await go('API keys', 'API keys');
    await page.getByRole('radio', { name: 'Sandbox' }).check();
    await expect.poll(() => page.getByRole('heading', { name: 'New sandbox key' }).count()).toBe(1);
    await page.getByLabel('Key name', { exact: true }).fill('tests');
    await page.getByRole('button', { name: 'Create API key' }).click();
    expect(await page.getByRole('region', { name: /Your new key/ }).locator('code').textContent()).toMatch(/^cl_test_/);
    await capture('api-keys-sandbox');
    await page.getByRole('radio', { name: 'Production' }).check();
    await expect.poll(() => page.getByRole('heading', { name: 'New production key' }).count()).toBe(1);
    expect(await page.getByRole('region', { name: /Your new key/ }).count()).toBe(0); // the sandbox secret is gone with the switch

    // Revoke the key (with a confirmation): an API call with it now fails.
    // Escape cancels the confirmation (the key stays); then revoke for real.
    await page.getByRole('row', { name: /ci/ }).getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect(await page.getByRole('row', { name: /ci/ }).count()).toBe(1);
    await page.getByRole('row', { name: /ci/ }).getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await capture('api-keys-revoke');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await expect.poll(() => page.getByRole('row', { name: /ci/ }).count()).toBe(0);
    const refused = await request(`${t.url}/api/v1/auth/verify`, { token: key, headers: { 'x-forwarded-for': nextIp() } });
    expect(refused.status).toBe(401);

    // Sign out: back at the sign-in page, and the session is gone (a reload stays signed out).
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => heading().textContent()).toBe('Sign in to Codeloom');
    await page.reload();
    await expect.poll(() => heading().textContent()).toBe('Sign in to Codeloom');

    // A wrong password is announced; signing in again then works by keyboard alone.
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Wrong email or password');
    await page.getByLabel('Password', { exact: true }).fill('');
    await page.getByLabel('Email', { exact: true }).fill('');
    await page.getByLabel('Email', { exact: true }).focus();
    await page.keyboard.type(email);
    await page.keyboard.press('Tab');
    await page.keyboard.type('correct horse battery');
    await page.keyboard.press('Enter');
    await expect.poll(() => heading().textContent()).toBe('Playground');
    // The new page's heading has focus; Shift+Tab reaches the last navigation link, Enter follows it.
    await expect.poll(() => page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
    await page.keyboard.press('Shift+Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Account');
    await page.keyboard.press('Enter');
    await expect.poll(() => heading().textContent()).toBe('Account');

    expect(cspErrors).toEqual([]);
    for (const [name, found] of Object.entries(a11y)) expect(found, `axe on ${name}`).toEqual([]);
  }, 90_000);
});
