/**
 * The dashboard's run view of an engineer run (issue 27 item 4), in a real browser against a real server: the
 * tool calls appear under the step as they happen (a `run` shown running, then with its exit status), each
 * folded with its output inside, and the run's changes with their diffs once it is done. A scripted OpenAI
 * fake decides the calls; the command runs in the sandbox (skipped, saying so, without Chromium or bubblewrap).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { loadConfig } from '../src/config/load-config.js';
import { VerificationService } from '../src/modules/verify/verification-service.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { hasChromium, launchBrowser, shot, CHROMIUM } from './helpers/browser.js';
import { startOpenAIFake, type FakeVendor } from './fakes/openai-fake.js';

const probe = await new VerificationService(loadConfig({})).status();
if (!hasChromium) console.log(`skipping the engineer run view browser test: ${CHROMIUM} is missing (apt-get install -y chromium)`);
else if (!probe.available) console.log(`skipping the engineer run view browser test: ${probe.reason}`);

describe.skipIf(!hasChromium || !probe.available)('dashboard: an engineer run\'s tool calls in a real browser', () => {
  let t: TestServer;
  let fake: FakeVendor;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const { buildWeb, webBuildNeeded } = await import('../../web/build.mjs');
    if (webBuildNeeded()) await buildWeb({ quiet: true });
    fake = await startOpenAIFake();
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-x', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_UPSTREAM_RETRIES: '0' } });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await fake?.close();
  });

  it('shows each tool call as it happens, its output folded, then the changes', async () => {
    const ip = nextIp();
    const u = await registerUser(t.url, { ip, name: 'Engineer Owner' });
    await t.server.ctx.store.accounts.setPlanByEmail(u.email.toLowerCase(), 'enterprise');
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, extraHTTPHeaders: { 'x-forwarded-for': ip } });
    page = await context.newPage();
    await page.goto(`${t.url}/dashboard/sign-in`);
    await page.getByLabel('Email', { exact: true }).fill(u.email);
    await page.getByLabel('Password', { exact: true }).fill(u.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Playground');

    const calls = [
      { name: 'write_file', arguments: JSON.stringify({ path: 'hello.sh', content: 'echo hello\n' }) },
      { name: 'run', arguments: JSON.stringify({ command: 'sleep 3; sh hello.sh; exit 3' }) },
      { name: 'finish', arguments: JSON.stringify({ summary: 'said hello' }) },
    ];
    fake.script({ reply: '', respond: (body: any) => ({ reply: '', toolCalls: [calls[(body.messages as Array<{ role: string }>).filter((m) => m.role === 'tool').length]!] }) });
    const agent = await request(`${t.url}/api/v1/agents`, { method: 'POST', token: u.token, body: { name: 'eng', model: 'gpt-test', config: { specialization: 'engineer' } } });
    const run = await request(`${t.url}/api/v1/agents/${agent.body.id}/execute`, { method: 'POST', token: u.token, body: { task: 'say hello', language: 'bash' } });
    await page.goto(`${t.url}/dashboard/runs/${run.body.id}`);
    const list = page.getByRole('list', { name: 'Tool calls of step 1' });
    // While the command runs: the call is listed, still running.
    await expect.poll(() => list.getByTestId('tool-call').evaluateAll((items) => items.map((i) => `${i.querySelector('summary code')?.textContent}:${i.getAttribute('data-ok')}`)), { timeout: 20_000 })
      .toEqual(['write_file:true', 'run:pending']);
    await expect.poll(() => list.getByTestId('tool-call').nth(1).locator('summary').textContent()).toContain('running…');
    // Then its exit status, and the run done.
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 30_000 }).toBe('succeeded');
    await expect.poll(() => list.getByTestId('tool-call').evaluateAll((items) => items.map((i) => i.querySelector('summary')?.textContent?.replace(/\s+\d+ ms$/, '')))).toEqual([
      '[1] write_file hello.sh ok', '[2] run sleep 3; sh hello.sh; exit 3 exit 3', '[3] finish ok',
    ]);
    // The output is folded: hidden until the call is opened.
    expect(await list.getByTestId('tool-call').nth(1).locator('pre').isVisible()).toBe(false);
    await list.getByTestId('tool-call').nth(1).locator('summary').click();
    await expect.poll(() => list.getByTestId('tool-call').nth(1).locator('pre').textContent()).toMatch(/\[exit 3\]\nhello/);
    // The run's changes, each diff folded.
    const changes = page.getByRole('list', { name: 'Changes' });
    expect(await changes.locator('summary').allTextContents()).toEqual(['added hello.sh']);
    await changes.locator('summary').click();
    expect(await changes.locator('pre').textContent()).toBe('--- /dev/null\n+++ b/hello.sh\n@@ -0,0 +1,1 @@\n+echo hello\n');
    await shot(page, 'dashboard-engineer-run');
    await context.close();
  }, 120_000);
});
