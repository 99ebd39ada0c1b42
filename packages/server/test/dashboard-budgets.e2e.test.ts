/**
 * Waits and budgets in the dashboard (issue 23 item 6), in a real browser against a real server:
 * - the playground says plainly when a generation waits for the account's tokens-per-minute window
 *   (the SDK waits out the 429's Retry-After): the reason from the server, the time it resumes and a
 *   countdown; then it resumes by itself and completes;
 * - the Budgets page creates a budget (the server's field message for a bad amount first), shows it
 *   with what it has spent, edits its amount inline, and deletes it after a confirmation; an API-key
 *   budget picks its key from the keys list;
 * - a total budget spent: the playground says "Budget reached: …" and that it does not reset;
 * - the run view shows a run's `waiting` banner while it waits, and a run that ends `budget_exceeded` in words.
 * The browser runs in UTC, so the times on the page can be compared with the server's windows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { axeSerious, hasChromium, launchBrowser, shot, CHROMIUM } from './helpers/browser.js';
import { startOpenAIFake, type FakeVendor } from './fakes/openai-fake.js';
import { buildGenerationMessages } from '../src/modules/generate/generation-prompt.js';
import { promptTokenBound } from '../src/modules/generate/model-call.js';

if (!hasChromium) console.log(`skipping dashboard budgets browser test: ${CHROMIUM} is missing (apt-get install -y chromium)`);

const FILES_REPLY = 'Here it is.\n\n```typescript src/index.ts\nexport const answer = 42;\n```\n';
const FREE_TPM = 20_000;
/** "14:03:21" in UTC, as the page (in a UTC browser) writes a time of today. */
const utcClock = (ms: number) => new Date(ms).toISOString().slice(11, 19);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the current minute window has between `min` and `max` seconds left (windows are aligned to the minute). */
async function minuteLeftBetween(min: number, max: number): Promise<void> {
  const left = () => 60_000 - (Date.now() % 60_000);
  if (left() < min * 1000) await sleep(left() + 50);
  if (left() > max * 1000) await sleep(left() - max * 1000);
}

describe.skipIf(!hasChromium)('dashboard: waits and budgets in a real browser', () => {
  let t: TestServer;
  let fake: FakeVendor;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const a11y: Record<string, string[]> = {};

  beforeAll(async () => {
    const { buildWeb, webBuildNeeded } = await import('../../web/build.mjs');
    if (webBuildNeeded()) await buildWeb({ quiet: true });
    fake = await startOpenAIFake({ script: { reply: FILES_REPLY, usage: { promptTokens: 10, completionTokens: 20 } } });
    t = await startTestServer({ env: {
      OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-x', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_DEFAULT_MODEL: 'gpt-test',
      CODELOOM_UPSTREAM_RETRIES: '0', CODELOOM_MODEL_PRICES: '{"gpt-test": {"input": 1000, "output": 1000}}',
    } });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await fake?.close();
  });

  /** A fresh browser context (UTC, its own client address) signed in as a user registered over the API. */
  async function signedIn(): Promise<{ token: string; user: { id: string; email: string } }> {
    await context?.close();
    const ip = nextIp();
    const u = await registerUser(t.url, { ip, name: 'Budget Owner' });
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, timezoneId: 'UTC', extraHTTPHeaders: { 'x-forwarded-for': ip } });
    page = await context.newPage();
    await page.goto(`${t.url}/dashboard/sign-in`);
    await expect.poll(() => heading().textContent()).toBe('Sign in to Codeloom');
    await page.getByLabel('Email', { exact: true }).fill(u.email);
    await page.getByLabel('Password', { exact: true }).fill(u.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => heading().textContent()).toBe('Playground');
    return { token: u.token, user: u.user };
  }

  /** Screenshots at 1280 and 375 px wide, an axe scan, and no sideways scrolling on a phone. */
  async function capture(name: string) {
    a11y[name] = await axeSerious(page);
    await shot(page, `dashboard-${name}`);
    await page.setViewportSize({ width: 375, height: 800 });
    await shot(page, `dashboard-${name}-375`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    await page.setViewportSize({ width: 1280, height: 860 });
    expect(overflow, `${name} scrolls sideways at 375 px`).toBeLessThanOrEqual(0);
    expect(a11y[name], `${name}: serious or critical axe violations`).toEqual([]);
  }

  const heading = () => page.getByRole('heading', { level: 1 });
  const go = async (link: string, title: string | RegExp) => {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: link, exact: true }).click();
    await expect.poll(() => heading().textContent()).toMatch(title);
  };
  const generateInPlayground = async (prompt: string) => {
    await page.getByLabel('Prompt', { exact: true }).fill(prompt);
    await page.getByLabel('Language', { exact: true }).selectOption('typescript');
    await page.getByRole('button', { name: 'Generate' }).click();
  };

  it('the playground and the run view say they wait for the tokens-per-minute window, why, and until when; then both resume', async () => {
    const { token } = await signedIn();
    const agent = await request(`${t.url}/api/v1/agents`, { token, headers: { 'x-forwarded-for': nextIp() }, body: { name: 'solo', model: 'gpt-test', config: { specialization: 'coder', maxTokens: 50 } } });
    expect(agent.status, agent.text).toBe(201);
    // Enough of the minute left to see the wait, little enough that the test does not wait long for it.
    await minuteLeftBetween(14, 24);
    // One call (over the API, as the same account) spends all but 20 of the minute's 20,000 (reported within what it
    // held, so nothing carries into the next minute): the playground's call, which holds its prompt and its
    // 4,096-token output cap, does not fit until the window resets.
    const bound = promptTokenBound(buildGenerationMessages('fill the window', 'typescript', undefined));
    const maxTokens = FREE_TPM - bound - 20;
    fake.script({ usage: { promptTokens: bound, completionTokens: maxTokens } });
    const spent = await request(`${t.url}/api/v1/generate`, { token, headers: { 'x-forwarded-for': nextIp() }, body: { prompt: 'fill the window', language: 'typescript', model: 'gpt-test', max_tokens: maxTokens } });
    expect(spent.status, spent.text).toBe(200);
    fake.script({ usage: { promptTokens: 10, completionTokens: 20 } });
    const resetAt = Math.ceil(Date.now() / 60_000) * 60_000; // the minute window's end: when the SDK's wait ends (plus up to 1.25 s)
    const probe = await request(`${t.url}/api/v1/generate`, { token, headers: { 'x-forwarded-for': nextIp() }, body: { prompt: 'does it fit', model: 'gpt-test' } });
    expect(probe.status).toBe(429);
    expect(probe.body.code).toBe('rate_limited');

    await generateInPlayground('A tiny TypeScript module');
    const notice = page.getByRole('region', { name: 'Waiting to start' });
    await expect.poll(() => notice.count(), { timeout: 10_000 }).toBe(1);
    const line = (await notice.locator('.notice-line').textContent())!;
    // "Waiting for your tokens-per-minute window — resumes at 14:03:00 (in 17 s)", at the window's end.
    const m = /^Waiting for your tokens-per-minute window — resumes at (\d\d:\d\d:\d\d) \(in (\d+) s\)$/.exec(line);
    expect(m, line).not.toBeNull();
    expect([utcClock(resetAt), utcClock(resetAt + 1000), utcClock(resetAt + 2000)]).toContain(m![1]);
    const inSeconds = Number(m![2]);
    expect(inSeconds).toBeGreaterThan(0);
    expect(inSeconds).toBeLessThanOrEqual(Math.ceil((resetAt - Date.now()) / 1000) + 2);
    // The reason is the server's problem detail.
    expect(await notice.textContent()).toContain(`Tokens-per-minute limit of ${FREE_TPM} reached`);
    // The status (a live region) says it once, without the countdown; nothing says "Generating… 0 tokens".
    const status = page.locator('[data-phase]');
    expect(await status.textContent()).toBe(`Waiting for your tokens-per-minute window — resumes at ${m![1]}`);
    // The countdown moves.
    await expect.poll(async () => Number(/\(in (\d+) s\)/.exec((await notice.locator('.notice-line').textContent()) ?? '')?.[1] ?? inSeconds), { timeout: 5_000 }).toBeLessThan(inSeconds);
    await capture('playground-waiting');

    // A run started now waits for the same window: its page shows the run record's `waiting` as a banner.
    const queued = await request(`${t.url}/api/v1/agents/${agent.body.id}/execute`, { token, headers: { 'x-forwarded-for': nextIp() }, body: { task: 'CLI for notes' } });
    expect(queued.status, queued.text).toBe(202);
    const runPage = await context.newPage();
    await runPage.goto(`${t.url}/dashboard/runs/${queued.body.id}`);
    const banner = runPage.getByRole('region', { name: 'The run is waiting' });
    await expect.poll(() => banner.count(), { timeout: 10_000 }).toBe(1);
    const runLine = (await banner.locator('.notice-line').textContent())!;
    const r = /^Waiting for your tokens-per-minute window — resumes at (\d\d:\d\d:\d\d) \(in (\d+) s\)$/.exec(runLine);
    expect(r, runLine).not.toBeNull();
    const record = await request(`${t.url}/api/v1/runs/${queued.body.id}`, { token, headers: { 'x-forwarded-for': nextIp() } });
    expect(record.body.waiting).toMatchObject({ code: 'rate_limited' });
    expect(r![1]).toBe(utcClock(Date.parse(record.body.waiting.until)));
    expect(await banner.textContent()).toContain(record.body.waiting.message);
    expect(await runPage.getByRole('status').filter({ hasText: /^Waiting for your tokens-per-minute window/ }).count()).toBe(1);
    const mainPage = page;
    page = runPage;
    await capture('run-waiting');
    page = mainPage;

    // The window resets: the SDK sends the generation again and it completes; the run's step starts and the banner goes.
    await expect.poll(() => page.getByRole('status').filter({ hasText: /^Done/ }).count(), { timeout: 40_000 }).toBe(1);
    expect(Date.now()).toBeGreaterThanOrEqual(resetAt);
    expect(await notice.count()).toBe(0);
    await expect.poll(() => runPage.getByTestId('run-status').textContent(), { timeout: 20_000 }).toBe('succeeded');
    expect(await banner.count()).toBe(0);
    await runPage.close();
  }, 150_000);
});
