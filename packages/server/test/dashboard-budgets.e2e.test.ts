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
    const m = /^Waiting for your tokens-per-minute window — resumes at (?:\d+ \w+ \d{4}, )?(\d\d:\d\d:\d\d) \(in (\d+) s\)$/.exec(line);
    expect(m, line).not.toBeNull();
    expect([utcClock(resetAt), utcClock(resetAt + 1000), utcClock(resetAt + 2000)]).toContain(m![1]);
    const inSeconds = Number(m![2]);
    expect(inSeconds).toBeGreaterThan(0);
    expect(inSeconds).toBeLessThanOrEqual(Math.ceil((resetAt - Date.now()) / 1000) + 2);
    // The reason is the server's problem detail.
    expect(await notice.textContent()).toContain(`Tokens-per-minute limit of ${FREE_TPM} reached`);
    // The status (a live region) says it once, without the countdown; nothing says "Generating… 0 tokens".
    const status = page.locator('[data-phase]');
    expect(await status.textContent()).toBe(line.replace(/ \(in \d+ s\)$/, ''));
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
    const r = /^Waiting for your tokens-per-minute window — resumes at (?:\d+ \w+ \d{4}, )?(\d\d:\d\d:\d\d) \(in (\d+) s\)$/.exec(runLine);
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

  it('the Budgets page creates a budget (the server\'s field message first), shows its spend, edits its amount inline and deletes it', async () => {
    const { token } = await signedIn();
    const headers = { 'x-forwarded-for': nextIp() };
    const profile = (await request(`${t.url}/api/v1/user/profile`, { token, headers })).body;
    const key = await request(`${t.url}/api/v1/api-keys`, { token, headers, body: { name: 'ci', scopes: ['read:code', 'write:code'] } });
    expect(key.status, key.text).toBe(201);
    await go('Budgets', 'Budgets');
    await expect.poll(() => page.getByText('No budgets yet').count()).toBe(1);
    const form = page.getByRole('region', { name: 'New budget' });
    const amount = form.getByLabel('Amount (USD)', { exact: true });

    // A bad amount: the server's message for that field, under it, and the field marked invalid.
    await amount.fill('0');
    await form.getByRole('button', { name: 'Create budget' }).click();
    await expect.poll(() => amount.getAttribute('aria-invalid')).toBe('true');
    const described = (await amount.getAttribute('aria-describedby'))!;
    expect(await page.locator(`#${described}`).textContent()).toMatch(/^must be > 0$|must be/);
    expect((await request(`${t.url}/api/v1/budgets`, { token, headers })).body.data).toEqual([]);

    // The organization's monthly budget of $10, alerts at 50 % and 80 %.
    await amount.fill('10');
    await form.getByLabel('Period', { exact: true }).selectOption('month');
    await form.getByLabel('Alerts at (% of the amount, optional)', { exact: true }).fill('50, 80');
    await form.getByRole('button', { name: 'Create budget' }).click();
    await expect.poll(() => form.getByRole('status').textContent()).toBe('Created the $10.00 per month budget.');
    expect(await amount.getAttribute('aria-invalid')).toBeNull();
    const [orgBudget] = (await request(`${t.url}/api/v1/budgets`, { token, headers })).body.data;
    expect(orgBudget).toMatchObject({ scope: { type: 'organization', id: profile.organization.id }, amount_usd: 10, period: 'month', alert_thresholds: [0.5, 0.8], spent_usd: 0 });
    const orgCard = page.getByRole('listitem', { name: `Organization: ${profile.organization.name}` });
    await expect.poll(() => orgCard.count()).toBe(1);
    const orgText = (await orgCard.textContent())!;
    expect(orgText).toContain('$0.00 of $10.00 spent (0%)');
    const reset = new Date(orgBudget.resets_at);
    expect(reset.getUTCDate()).toBe(1);
    expect(orgText).toContain(`Resets at ${reset.getUTCDate()} ${reset.toLocaleDateString('en-GB', { month: 'short', timeZone: 'UTC' })} ${reset.getUTCFullYear()}, 00:00:00`);
    expect(orgText).toContain('Alerts at 50%, 80%');

    // An API key's daily budget of $3, the key picked from the keys list.
    await form.getByLabel('Applies to', { exact: true }).selectOption('api_key');
    await form.getByLabel('API key', { exact: true }).selectOption({ label: `ci (${key.body.prefix}…)` });
    await amount.fill('3');
    await form.getByLabel('Period', { exact: true }).selectOption('day');
    await form.getByRole('button', { name: 'Create budget' }).click();
    await expect.poll(() => form.getByRole('status').textContent()).toBe('Created the $3.00 per day budget.');
    const keyCard = page.getByRole('listitem', { name: `API key: ci (${key.body.prefix}…)` });
    await expect.poll(() => keyCard.count()).toBe(1);
    expect(await keyCard.textContent()).toContain('Alerts at 50%, 80%, 100%'); // the server's default thresholds

    // $1.60 spent with the key (1,600 tokens at $0.001 a token): past the 50 % alert, the bar says so.
    fake.script({ usage: { promptTokens: 100, completionTokens: 1_500 } });
    const call = await request(`${t.url}/api/v1/generate`, { token: key.body.key, headers, body: { prompt: 'spend', model: 'gpt-test', max_tokens: 2_000 } });
    expect(call.status, call.text).toBe(200);
    fake.script({ usage: { promptTokens: 10, completionTokens: 20 } });
    await page.reload();
    await expect.poll(() => keyCard.textContent()).toContain('$1.60 of $3.00 spent (53.3%)');
    expect(await keyCard.textContent()).toContain('Past the 50% alert');
    const bar = keyCard.getByRole('progressbar', { name: `Spent of the API key: ci (${key.body.prefix}…) budget` });
    expect(await bar.getAttribute('aria-valuenow')).toBe('53');
    expect(await bar.locator('.bar-fill').getAttribute('data-level')).toBe('warn');
    // The organization's budget counts the key's call too (the key is the organization's).
    await expect.poll(() => orgCard.textContent()).toContain('$1.60 of $10.00 spent (16%)');
    expect(await orgCard.getByRole('progressbar').locator('.bar-fill').getAttribute('data-level')).toBe('ok');
    await capture('budgets');

    // The amount, edited inline: a bad one gets the server's message; a good one is saved.
    const edit = page.getByRole('form', { name: `Edit the Organization: ${profile.organization.name} budget` });
    const inline = edit.getByLabel('Amount (USD)', { exact: true });
    await inline.fill('-1');
    await edit.getByRole('button', { name: 'Save amount' }).click();
    await expect.poll(() => inline.getAttribute('aria-invalid')).toBe('true');
    expect(await orgCard.locator('.error').textContent()).toMatch(/^Amount must/);
    await inline.fill('12.5');
    await edit.getByRole('button', { name: 'Save amount' }).click();
    await expect.poll(() => orgCard.textContent()).toContain('$1.60 of $12.50 spent (12.8%)');
    expect(await orgCard.textContent()).toContain('$12.50 per month');
    expect((await request(`${t.url}/api/v1/budgets/${orgBudget.id}`, { token, headers })).body.amount_usd).toBe(12.5);

    // Delete, after a confirmation (Cancel first keeps it).
    await edit.getByRole('button', { name: 'Delete budget' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this budget?' });
    expect(await dialog.textContent()).toContain(`Organization: ${profile.organization.name}, $12.50 per month`);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await orgCard.count()).toBe(1);
    await edit.getByRole('button', { name: 'Delete budget' }).click();
    await dialog.getByRole('button', { name: 'Delete budget' }).click();
    await expect.poll(() => orgCard.count()).toBe(0);
    expect(await keyCard.count()).toBe(1);
    const left = (await request(`${t.url}/api/v1/budgets`, { token, headers })).body.data;
    expect(left.map((b: { scope: { type: string } }) => b.scope.type)).toEqual(['api_key']);
  }, 90_000);

  it('a spent budget: the playground says "Budget reached" with the server\'s reason (a total budget: no reset; a day\'s: when it resets); a run that ends budget_exceeded says so', async () => {
    const { token } = await signedIn();
    const headers = { 'x-forwarded-for': nextIp() };
    const profile = (await request(`${t.url}/api/v1/user/profile`, { token, headers })).body;
    const made = await request(`${t.url}/api/v1/budgets`, { token, headers, body: { scope: { type: 'organization', id: profile.organization.id }, amount_usd: 10, period: 'total' } });
    expect(made.status, made.text).toBe(201);
    // $8 of the $10 spent ($0.001 a token): the playground's call may cost up to its prompt and 4,096-token cap, about $4.5.
    fake.script({ usage: { promptTokens: 100, completionTokens: 7_900 } });
    const spend = await request(`${t.url}/api/v1/generate`, { token, headers, body: { prompt: 'spend', model: 'gpt-test', max_tokens: 8_000 } });
    expect(spend.status, spend.text).toBe(200);
    fake.script({ usage: { promptTokens: 10, completionTokens: 20 } });

    await generateInPlayground('A tiny TypeScript module');
    const refused = page.getByRole('region', { name: 'Generation refused' });
    await expect.poll(() => refused.count(), { timeout: 10_000 }).toBe(1);
    const line = (await refused.locator('.notice-line').textContent())!;
    expect(line).toMatch(/^Budget reached: The organization's total budget of \$10\.000000 \(bud_[\w-]+\) is reached: \$2\.000000 left, .*; it is a total budget and does not reset$/);
    expect(await page.locator('[data-phase]').textContent()).toBe(`Generation refused: ${line}`);
    expect(await page.getByTestId('stream-output').count()).toBe(0);
    await capture('playground-budget-reached');

    // The same budget by the day: refused until the next UTC midnight, which the page names.
    const patched = await request(`${t.url}/api/v1/budgets/${made.body.id}`, { token, headers, method: 'PATCH', body: { period: 'day' } });
    expect(patched.status, patched.text).toBe(200);
    await page.getByRole('button', { name: 'Generate' }).click();
    await expect.poll(async () => (await refused.locator('.notice-line').textContent()) ?? '', { timeout: 10_000 }).toMatch(/daily budget/);
    const daily = (await refused.locator('.notice-line').textContent())!;
    const midnight = Date.parse(patched.body.resets_at);
    expect(new Date(midnight).toISOString().slice(11)).toBe('00:00:00.000Z');
    const when = new Date(midnight);
    const at = when.toISOString().slice(0, 10) === new Date().toISOString().slice(0, 10) ? utcClock(midnight) : `${when.getUTCDate()} ${when.toLocaleDateString('en-GB', { month: 'short', timeZone: 'UTC' })} ${when.getUTCFullYear()}, ${utcClock(midnight)}`;
    expect(daily).toMatch(new RegExp(`^Budget reached: The organization's daily budget of .* — resets at ${at.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(in (\\d+ h( \\d+ min)?|\\d+ min( \\d+ s)?|\\d+ s)\\)$`));

    // A run with a ceiling its first step cannot fit ends failed with budget_exceeded: the run page says so in words.
    await request(`${t.url}/api/v1/budgets/${made.body.id}`, { token, headers, method: 'DELETE' });
    const agent = await request(`${t.url}/api/v1/agents`, { token, headers, body: { name: 'thrifty', model: 'gpt-test', config: { specialization: 'coder', max_cost_usd: 0.005 } } });
    expect(agent.status, agent.text).toBe(201);
    const queued = await request(`${t.url}/api/v1/agents/${agent.body.id}/execute`, { token, headers, body: { task: 'CLI for notes' } });
    expect(queued.status, queued.text).toBe(202);
    await page.goto(`${t.url}/dashboard/runs/${queued.body.id}`);
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 20_000 }).toBe('failed');
    const run = (await request(`${t.url}/api/v1/runs/${queued.body.id}`, { token, headers })).body;
    expect(run.error.code).toBe('budget_exceeded');
    expect(await page.getByTestId('run-error').textContent()).toBe(`Budget reached: ${run.error.message} (budget_exceeded)`);
    // The run's ceiling is shown beside its tokens.
    await expect.poll(() => page.getByText('ceiling $0.005').count()).toBe(1);
    await capture('run-budget-exceeded');
  }, 90_000);
});
