import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { lookup } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendWebhook, type SenderOptions } from './webhook-sender.js';

/** A resolver that answers every name with `address` (what a rebinding or internal DNS server would say). */
const resolvesTo = (address: string, seen: string[] = []) => ((hostname: string, options: { all?: boolean }, callback: (...a: unknown[]) => void) => {
  seen.push(hostname);
  const family = address.includes(':') ? 6 : 4;
  if (options.all) callback(null, [{ address, family }]);
  else callback(null, address, family);
}) as unknown as typeof lookup;

describe('webhook sender', () => {
  let server: Server;
  let port: number;
  const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  let answer: number | 'hang' = 200;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => { body += d; });
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        if (answer === 'hang') return;
        res.writeHead(answer, { location: 'http://127.0.0.1:1/' }).end('ignored');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => { server.closeAllConnections(); server.close(); });

  const options = (o: Partial<SenderOptions> = {}): SenderOptions => ({ allowPrivate: false, timeoutMs: 2_000, userAgent: 'Codeloom-Webhooks/test', ...o });

  it('refuses a name that resolves to a private address, without connecting', async () => {
    received.length = 0;
    const seen: string[] = [];
    const out = await sendWebhook(`http://hooks.example.test:${port}/x`, '{}', {}, options({ resolve: resolvesTo('127.0.0.1', seen) }));
    expect(out.status).toBeNull();
    expect(out.error).toMatch(/refused: hooks\.example\.test resolves to 127\.0\.0\.1, a loopback address/);
    expect(seen).toEqual(['hooks.example.test']);
    expect(received).toHaveLength(0);
  });

  it('refuses IP literals of private ranges (no lookup happens for them)', async () => {
    for (const url of [`http://127.0.0.1:${port}/`, `http://[::1]:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`, `http://localhost:${port}/`]) {
      const out = await sendWebhook(url, '{}', {}, options());
      expect(out.error, url).toMatch(/^refused: /);
    }
    expect(received).toHaveLength(0);
  });

  it('connects to the address the checked lookup returned (allowed private): one resolution, headers and body as given', async () => {
    received.length = 0;
    answer = 204;
    const seen: string[] = [];
    const out = await sendWebhook(`http://hooks.example.test:${port}/in`, '{"a":1}', { 'codeloom-signature': 't=1,v1=ab' }, options({ allowPrivate: true, resolve: resolvesTo('127.0.0.1', seen) }));
    expect(out).toEqual({ status: 204, error: null });
    expect(seen).toEqual(['hooks.example.test']);
    expect(received).toHaveLength(1);
    expect(received[0]!.body).toBe('{"a":1}');
    expect(received[0]!.headers).toMatchObject({ 'content-type': 'application/json', 'user-agent': 'Codeloom-Webhooks/test', 'codeloom-signature': 't=1,v1=ab', host: `hooks.example.test:${port}` });
  });

  it('a non-2xx (a redirect too, not followed) is a failure with its status; no answer in time is a failure without one', async () => {
    answer = 302;
    expect(await sendWebhook(`http://127.0.0.1:${port}/`, '{}', {}, options({ allowPrivate: true }))).toEqual({ status: 302, error: 'HTTP 302' });
    answer = 'hang';
    const out = await sendWebhook(`http://127.0.0.1:${port}/`, '{}', {}, options({ allowPrivate: true, timeoutMs: 300 }));
    expect(out).toEqual({ status: null, error: 'no answer within 0.3 s' });
    answer = 200;
    const refused = await sendWebhook('http://127.0.0.1:1/', '{}', {}, options({ allowPrivate: true }));
    expect(refused.status).toBeNull();
    expect(refused.error).toMatch(/ECONNREFUSED/);
  });
});
