/**
 * CORS (CONTRACT §12.3, docs/config.md CODELOOM_CORS_ORIGINS): the listed origins get CORS answers on the
 * APIs and the OAuth token endpoints — a preflight is 204 with the methods and headers a browser client
 * sends, a real answer names the origin and exposes the limit headers — never with credentials; any other
 * origin, and the dashboard's own pages, get no CORS headers. Without the setting nothing changes. A real
 * browser (Debian chromium) on another origin calls the API with fetch.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser } from './helpers/http.js';
import { loadConfig } from '../src/config/load-config.js';
import { ConfigError } from '../src/errors.js';
import { hasChromium, launchBrowser } from './helpers/browser.js';

const ORIGIN = 'https://app.example.com';

const preflight = (url: string, origin: string, method = 'POST', headers = 'authorization,content-type') =>
  fetch(url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });

describe('CORS with CODELOOM_CORS_ORIGINS', () => {
  let t: TestServer;
  let token: string;
  beforeAll(async () => {
    t = await startTestServer({ env: { CODELOOM_CORS_ORIGINS: `${ORIGIN},http://localhost:5173` } });
    token = (await registerUser(t.url, { ip: nextIp() })).token;
  });
  afterAll(async () => { await t?.close(); });

  it('a preflight from a listed origin is 204 with the methods and headers, and no credentials', async () => {
    for (const path of ['/api/v1/generate', '/v1/generate', '/openai/v1/chat/completions', '/anthropic/v1/messages', '/oauth/token', '/api/v1/budgets/bud_x']) {
      const res = await preflight(`${t.url}${path}`, ORIGIN, 'POST', 'authorization,content-type,x-api-key,anthropic-version,anthropic-dangerous-direct-browser-access,x-stainless-os');
      expect(res.status, path).toBe(204);
      expect(res.headers.get('access-control-allow-origin'), path).toBe(ORIGIN);
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      expect(res.headers.get('access-control-allow-methods')).toContain('DELETE');
      const allowed = res.headers.get('access-control-allow-headers')!.split(/,\s*/);
      // anthropic-dangerous-direct-browser-access: what @anthropic-ai/sdk sends from a browser (dangerouslyAllowBrowser).
      for (const h of ['authorization', 'content-type', 'x-api-key', 'anthropic-version', 'anthropic-dangerous-direct-browser-access', 'x-stainless-os']) expect(allowed).toContain(h);
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(res.headers.get('vary')).toMatch(/origin/i);
    }
  });

  it('a real answer names the origin and exposes Retry-After and the rate-limit headers; errors too', async () => {
    const res = await fetch(`${t.url}/api/v1/user/profile`, { headers: { origin: ORIGIN, authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    const exposed = res.headers.get('access-control-expose-headers')!;
    for (const h of ['retry-after', 'x-ratelimit-remaining', 'x-request-id', 'request-id']) expect(exposed).toContain(h);
    const denied = await fetch(`${t.url}/api/v1/user/profile`, { headers: { origin: ORIGIN } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('access-control-allow-origin')).toBe(ORIGIN);
  });

  it('another origin, or a page outside the APIs, gets no CORS headers', async () => {
    const other = await preflight(`${t.url}/api/v1/generate`, 'https://evil.example.net');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const plain = await fetch(`${t.url}/api/v1/user/profile`, { headers: { origin: 'https://evil.example.net', authorization: `Bearer ${token}` } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    const page = await fetch(`${t.url}/oauth/authorize`, { headers: { origin: ORIGIN } });
    expect(page.headers.get('access-control-allow-origin')).toBeNull();
    const health = await fetch(`${t.url}/healthz`, { headers: { origin: ORIGIN } });
    expect(health.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('a bad origin in the setting stops the server at start, naming it', () => {
    let error: unknown;
    try { loadConfig({ CODELOOM_CORS_ORIGINS: 'https://ok.example.com,https://x.example.com/path,ftp://y' }); } catch (e) { error = e; }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toContain('"https://x.example.com/path" is not an origin');
    expect(problems).toContain('"ftp://y" is not an origin');
    expect(problems).not.toContain('ok.example.com');
  });
});

describe('CORS off (the default)', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t?.close(); });

  it('no CORS headers anywhere', async () => {
    const res = await preflight(`${t.url}/api/v1/generate`, ORIGIN);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const get = await fetch(`${t.url}/healthz`, { headers: { origin: ORIGIN } });
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe.skipIf(!hasChromium)('CORS in a real browser', () => {
  let t: TestServer;
  let page: Server;
  let pageOrigin: string;
  beforeAll(async () => {
    page = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>other origin</title>'));
    await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
    pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    t = await startTestServer({ env: { CODELOOM_CORS_ORIGINS: pageOrigin } });
  });
  afterAll(async () => { await t?.close(); await new Promise((r) => page?.close(r)); });

  it('browser code on a listed origin calls the API with a bearer token; another origin is refused by the browser', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const browser = await launchBrowser();
    try {
      const tab = await browser.newPage();
      await tab.goto(pageOrigin);
      const answer = await tab.evaluate(async ([api, bearer]) => {
        const res = await fetch(`${api}/api/v1/generate`, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'a todo API', model: 'sandbox' }) });
        return { status: res.status, remaining: res.headers.get('x-ratelimit-remaining'), model: (await res.json()).model };
      }, [t.url, token] as const);
      expect(answer).toMatchObject({ status: 200, model: 'sandbox' });
      expect(Number(answer.remaining)).toBeGreaterThan(0);

      // The same page served from another origin (localhost is not 127.0.0.1): the browser blocks the answer.
      await tab.goto(pageOrigin.replace('127.0.0.1', 'localhost'));
      const blocked = await tab.evaluate(async ([api, bearer]) => {
        try {
          await fetch(`${api}/api/v1/user/profile`, { headers: { authorization: `Bearer ${bearer}` } });
          return 'allowed';
        } catch (e) {
          return (e as Error).name;
        }
      }, [t.url, token] as const);
      expect(blocked).toBe('TypeError');
    } finally {
      await browser.close();
    }
  }, 60_000);
});
