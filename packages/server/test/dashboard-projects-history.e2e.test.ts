/**
 * A project's history on the dashboard, in a real browser against a real server: the revisions table (made by
 * the template and by writes over the API), one revision's diffs, restore after a confirmation (a new revision;
 * the files follow), and zip downloads of a revision and of the current files (read back with unzip). An axe
 * scan and screenshots at 1280 and 375 px.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { axeSerious, hasChromium, launchBrowser, shot, CHROMIUM } from './helpers/browser.js';

if (!hasChromium) console.log(`skipping dashboard project history browser test: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.skipIf(!hasChromium)('dashboard: project history in a real browser', () => {
  let t: TestServer;
  let browser: Browser;
  let context: BrowserContext | undefined;
  let page: Page;
  let dir: string;

  beforeAll(async () => {
    const { buildWeb, webBuildNeeded } = await import('../../web/build.mjs');
    if (webBuildNeeded()) await buildWeb({ quiet: true });
    t = await startTestServer();
    browser = await launchBrowser();
    dir = mkdtempSync(join(tmpdir(), 'codeloom-dash-history-'));
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
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

  it('shows revisions and a diff, restores after a confirmation, and downloads zips', async () => {
    const ip = nextIp();
    const u = await registerUser(t.url, { ip, name: 'Historian' });
    const api = (path: string) => `${t.url}/api/v1/projects${path}`;
    const p = (await request(api(''), { token: u.token, body: { name: 'history demo', template: 'node-cli' } })).body;
    const files = (await request(api(`/${p.id}/files?limit=100`), { token: u.token })).body.data.map((f: { path: string }) => f.path);
    const target = files.find((f: string) => f.endsWith('.js') || f.endsWith('.ts') || f.endsWith('.md'))!;
    const original = (await request(api(`/${p.id}/files/${target}`), { token: u.token })).body.content as string;
    expect((await request(api(`/${p.id}/files/${target}`), { token: u.token, method: 'PUT', body: { content: `${original}// changed from the API\n` } })).status).toBe(201);
    expect((await request(api(`/${p.id}/files/notes.md`), { token: u.token, method: 'PUT', body: { content: '# Notes\n' } })).status).toBe(201);

    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, timezoneId: 'UTC', extraHTTPHeaders: { 'x-forwarded-for': ip }, acceptDownloads: true });
    page = await context.newPage();
    await page.goto(`${t.url}/dashboard/sign-in`);
    await expect.poll(() => heading().textContent()).toBe('Sign in to Codeloom');
    await page.getByLabel('Email', { exact: true }).fill(u.email);
    await page.getByLabel('Password', { exact: true }).fill(u.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => heading().textContent()).toBe('Playground');
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Projects', exact: true }).click();
    await expect.poll(() => heading().textContent()).toBe('Projects');
    await page.getByRole('link', { name: 'history demo' }).click();
    await expect.poll(() => heading().textContent()).toBe('history demo');

    // Three revisions, newest first.
    const history = page.getByRole('heading', { name: /^History/ });
    await expect.poll(() => history.textContent()).toBe('History (3 revisions)');
    const rows = page.getByTestId('revision');
    await expect.poll(() => rows.count()).toBe(3);
    expect(await rows.nth(0).textContent()).toContain('Write notes.md');
    expect(await rows.nth(1).textContent()).toContain(`Write ${target}`);
    expect(await rows.nth(2).textContent()).toContain('Created from template node-cli');
    expect(await rows.nth(0).textContent()).toContain('Historian');

    // One revision's changes: the diff of the file it changed.
    await page.getByRole('button', { name: 'Changes in r2' }).click();
    const diff = page.getByLabel(`Diff of ${target}`);
    await expect.poll(() => diff.count()).toBe(1);
    expect(await diff.locator('.diff-add').allTextContents()).toEqual(['+// changed from the API\n']);
    expect(await diff.locator('.diff-del').count()).toBe(0);
    expect(await diff.locator('.diff-file').first().textContent()).toBe(`--- a/${target}\n`);
    await capture('project-history');

    // Restore r1 after a confirmation (cancel first: nothing happens).
    await page.getByRole('button', { name: 'Restore r1' }).click();
    const dialog = page.getByRole('dialog', { name: 'Restore revision 1?' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect((await request(api(`/${p.id}/revisions`), { token: u.token })).body.pagination.total).toBe(3);
    await page.getByRole('button', { name: 'Restore r1' }).click();
    await dialog.getByRole('button', { name: 'Restore', exact: true }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Restored revision 1 as revision 4.');
    await expect.poll(() => history.textContent()).toBe('History (4 revisions)');
    expect(await rows.nth(0).textContent()).toContain('Restore revision 1');
    // The restore's own changes are shown: notes.md deleted, the file put back.
    await expect.poll(() => page.getByRole('heading', { name: 'Changes in revision 4' }).count()).toBe(1);
    await expect.poll(() => page.getByLabel('Diff of notes.md').locator('.diff-del').allTextContents()).toEqual(['-# Notes\n']);
    expect((await request(api(`/${p.id}/files/${target}`), { token: u.token })).body.content).toBe(original);
    expect((await request(api(`/${p.id}/files/notes.md`), { token: u.token })).status).toBe(404);
    // The file list follows: notes.md is gone from it.
    await expect.poll(() => page.getByRole('list', { name: 'File tree' }).getByRole('button', { name: 'notes.md' }).count()).toBe(0);

    // Downloads: revision 3 (with notes.md) and the current files.
    const [r3] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download r3' }).click()]);
    expect(r3.suggestedFilename()).toBe('history-demo-r3.zip');
    const r3Path = join(dir, 'r3.zip');
    await r3.saveAs(r3Path);
    expect(execFileSync('unzip', ['-p', r3Path, 'notes.md']).toString()).toBe('# Notes\n');
    expect(execFileSync('unzip', ['-p', r3Path, target]).toString()).toBe(`${original}// changed from the API\n`);
    const [now] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download current files' }).click()]);
    expect(now.suggestedFilename()).toBe('history-demo.zip');
    const nowPath = join(dir, 'now.zip');
    await now.saveAs(nowPath);
    expect(execFileSync('unzip', ['-Z1', nowPath]).toString().split('\n').filter(Boolean).sort()).toEqual([...files].sort());
    await capture('project-history-restored');
  });
});
