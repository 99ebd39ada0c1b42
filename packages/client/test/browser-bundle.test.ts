import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.js';

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.log('skipping the SDK browser test: /usr/bin/chromium is not installed (apt-get install chromium)');

/**
 * The SDK bundled for the browser (esbuild, platform "browser": any Node-only
 * import fails the build) and run in headless Chromium against a real server.
 * The page and the API share one origin through Playwright's routing, so the
 * test needs no CORS.
 */
describe.skipIf(!haveChromium)('@codeloom/client in a browser', () => {
  let t: TestServer;
  let bundle: string;
  beforeAll(async () => {
    t = await startTestServer();
    const out = await build({
      entryPoints: [fileURLToPath(new URL('../src/index.ts', import.meta.url))],
      bundle: true, platform: 'browser', format: 'esm', write: false, target: 'es2022',
      alias: { '@codeloom/protocol': fileURLToPath(new URL('../../protocol/src/index.ts', import.meta.url)) },
    });
    bundle = out.outputFiles[0]!.text;
  });
  afterAll(async () => { await t?.close(); });

  it('bundles without Node built-ins and talks to the server from a page', async () => {
    expect(bundle).not.toMatch(/from\s*["']node:/);
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
    try {
      const page = await browser.newPage();
      const origin = 'http://codeloom.test';
      await page.route(`${origin}/**`, async (route) => {
        const url = new URL(route.request().url());
        if (url.pathname === '/') return route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>sdk</title><script type="module" src="/sdk.js"></script>' });
        if (url.pathname === '/sdk.js') return route.fulfill({ contentType: 'text/javascript', body: `${bundle}\nwindow.CodeloomSDK = { Codeloom, CodeGenClient, CodeloomError };` });
        const response = await route.fetch({ url: `${t.url}${url.pathname}${url.search}` });
        return route.fulfill({ response });
      });
      await page.goto(`${origin}/`);
      await page.waitForFunction(() => 'CodeloomSDK' in window);
      const outcome = await page.evaluate(async (base) => {
        const { CodeGenClient, CodeloomError } = (window as unknown as { CodeloomSDK: { CodeGenClient: any; CodeloomError: any } }).CodeloomSDK;
        // The spec's one-object form; no `process` here, so no CODELOOM_* variable is looked up.
        const client = new CodeGenClient({ baseUrl: base, environment: 'sandbox' });
        await client.auth.register({ email: `browser-${Date.now()}@example.com`, password: 'browser password', name: 'Browser' });
        const identity = await client.authenticate();
        if (identity.credential.environment !== 'sandbox') throw new Error('not in the sandbox');
        const profile = await client.user.profile();
        const result = await client.generate({ prompt: 'REST API for todos', language: 'typescript' });
        let error: { code?: string; isInstance?: boolean } = {};
        try { await client.projects.get('prj_missing'); } catch (e) { error = { code: (e as { code: string }).code, isInstance: CodeloomError.isInstance(e) }; }
        return { environment: profile.environment, model: result.model, files: result.files.length, error };
      }, origin);
      expect(outcome).toEqual({ environment: 'sandbox', model: 'sandbox', files: expect.any(Number), error: { code: 'not_found', isInstance: true } });
      expect(outcome.files).toBeGreaterThan(0);
      mkdirSync(fileURLToPath(new URL('../../../.test-output/screenshots/', import.meta.url)), { recursive: true });
    } finally {
      await browser.close();
    }
  }, 60_000);
});
