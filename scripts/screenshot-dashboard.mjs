// npm run screenshot: regenerates docs/images/dashboard-playground.png, the README's picture of the
// dashboard, with a neutral account (Ada Lovelace, ada@example.com) and the offline sandbox model:
// the built server on a scratch data directory, Debian's chromium through playwright-core.
//   CHROMIUM=/path/to/chromium npm run screenshot
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { buildIfNeeded, root } from './build-if-needed.mjs';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  console.error(`screenshot: ${CHROMIUM} is missing (apt-get install -y chromium, or set CHROMIUM)`);
  process.exit(1);
}
const OUT = fileURLToPath(new URL('../docs/images/dashboard-playground.png', import.meta.url));

buildIfNeeded();
const dataDir = mkdtempSync(join(tmpdir(), 'codeloom-shot-'));
const server = spawn(process.execPath, [join(root, 'packages/server/dist/main.js')], {
  env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', CODELOOM_DATA_DIR: dataDir },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let browser;
try {
  const url = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => { out += d; const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(out); if (m) resolve(m[1]); });
    server.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: 'light' })).newPage();
  const heading = page.getByRole('heading', { level: 1 });
  const until = async (check) => { for (let i = 0; i < 200 && !(await check()); i++) await page.waitForTimeout(50); };

  await page.goto(`${url}/dashboard`);
  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Ada Lovelace');
  await page.getByLabel('Email', { exact: true }).fill('ada@example.com');
  await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
  await page.getByRole('button', { name: 'Create account' }).click();
  await until(async () => (await heading.textContent()) === 'API keys');

  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Playground', exact: true }).click();
  await until(async () => (await heading.textContent()) === 'Playground');
  await page.getByLabel('Prompt', { exact: true }).fill('REST API for todos with validation');
  await page.getByLabel('Language', { exact: true }).selectOption('typescript');
  await page.getByLabel('Framework', { exact: true }).fill('fastify');
  await page.getByRole('button', { name: 'Generate' }).click();
  await until(async () => (await page.getByRole('status').filter({ hasText: /^Done/ }).count()) === 1);
  const first = page.getByRole('button', { name: /\.ts$/ }).first();
  if (await first.count()) await first.click();
  await page.waitForTimeout(200);
  await page.setViewportSize({ width: 1280, height: 1130 }); // the README's picture: the form, the result and the top of a file
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: OUT });
  console.log(`wrote ${OUT}`);
} finally {
  await browser?.close();
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
