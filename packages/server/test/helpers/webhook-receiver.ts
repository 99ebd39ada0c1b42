import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHook { headers: IncomingHttpHeaders; body: string; json: any; answered: number; at: number }

/**
 * A real HTTP receiver on loopback: records every POST and answers with what `answer` says for the n-th
 * request (1-based), 200 by default.
 */
export async function startWebhookReceiver(answer: (n: number, hook: Omit<ReceivedHook, 'answered'>) => number = () => 200) {
  const received: ReceivedHook[] = [];
  let respond = answer;
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      let json: unknown;
      try { json = JSON.parse(body); } catch { json = undefined; }
      const hook = { headers: req.headers, body, json, at: Date.now() };
      const status = respond(received.length + 1, hook);
      received.push({ ...hook, answered: status });
      res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    /** Changes how later requests are answered. */
    answerWith(next: typeof answer) { respond = next; },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/** A receiver's check, written as the docs tell users to: HMAC-SHA256 of "<t>.<raw body>" with the secret, compared in constant time. */
export function signatureValid(secret: string, header: string | undefined, rawBody: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(`${m[1]}.${rawBody}`).digest();
  return timingSafeEqual(expected, Buffer.from(m[2]!, 'hex'));
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns something truthy (or throws what went wrong after `timeoutMs`). */
export async function eventually<T>(probe: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
