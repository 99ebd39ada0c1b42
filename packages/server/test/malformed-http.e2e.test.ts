import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers/test-server.js';

/** Raw bytes on a socket: what a client that is not an HTTP library sends. */
function rawExchange(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(bytes));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      answer += d;
      const split = answer.indexOf('\r\n\r\n');
      const length = /content-length:\s*(\d+)/i.exec(answer)?.[1];
      if (split >= 0 && length && answer.length >= split + 4 + Number(length)) socket.end();
    });
    socket.on('close', () => resolve(answer));
    socket.on('error', (e) => (answer ? resolve(answer) : reject(e)));
    socket.setTimeout(5_000, () => socket.destroy());
  });
}

function parse(answer: string) {
  const split = answer.indexOf('\r\n\r\n');
  const head = answer.slice(0, split).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0]!)?.[1]);
  const headers = Object.fromEntries(head.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status, headers, body: JSON.parse(answer.slice(split + 4)) };
}

function expectRawProblem(answer: string, status: number, code: string) {
  const res = parse(answer);
  expect(res.status, answer).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.headers['x-request-id']).toMatch(/^req_/);
  expect(res.body).toMatchObject({ type: `/docs/errors#${code}`, status, code, request_id: res.headers['x-request-id'] });
  expect(res.body.detail).toEqual(expect.any(String));
}

describe('malformed HTTP answers problem documents on the socket', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t.close(); });

  it.each([
    ['bare LF line endings', 'GET /healthz HTTP/1.1\nHost: x\n\n'],
    ['an obs-fold header continuation', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n  b\r\n\r\n'],
    ['Content-Length together with Transfer-Encoding', 'POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['an unknown method', 'FOO /healthz HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a request line that is not HTTP', 'hello\r\n\r\n'],
    ['a bad chunk size', 'POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n'],
  ])('%s → 400 validation_failed', async (_name, bytes) => {
    expectRawProblem(await rawExchange(t.url, bytes), 400, 'validation_failed');
  });

  it('CONNECT (a proxy request, which Node hands past the router) → 405 method_not_allowed', async () => {
    expectRawProblem(await rawExchange(t.url, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'), 405, 'method_not_allowed');
  });

  it('a broken WebSocket handshake on the streaming route → 400 validation_failed, not a text/html answer', async () => {
    const answer = await rawExchange(t.url, 'GET /api/v1/stream HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
    expectRawProblem(answer, 400, 'validation_failed');
    expect(parse(answer).body.detail).toMatch(/Sec-WebSocket-Key/);
  });

  it('headers over the size limit → 431 headers_too_large', async () => {
    expectRawProblem(await rawExchange(t.url, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`), 431, 'headers_too_large');
  });

  it('an HTTP/1.1 request without Host → 400 validation_failed naming the header', async () => {
    const answer = await rawExchange(t.url, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    expectRawProblem(answer, 400, 'validation_failed');
    expect(parse(answer).body.errors).toEqual([{ path: 'headers/host', message: 'is required' }]);
  });

  it('HTTP/1.0 without Host is still served', async () => {
    expect(parse(await rawExchange(t.url, 'GET /healthz HTTP/1.0\r\n\r\n')).status).toBe(200);
  });

  it('bad percent-encoding and over-long parameters on a raw socket are problem documents too', async () => {
    expectRawProblem(await rawExchange(t.url, 'GET /api/v1/projects/%ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), 400, 'validation_failed');
    expectRawProblem(await rawExchange(t.url, `GET /api/v1/projects/${'a'.repeat(600)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`), 400, 'validation_failed');
  });

  it('the server keeps serving afterwards', async () => {
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
  });
});
