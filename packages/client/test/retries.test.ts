/**
 * Retries as the OpenAI SDK does them, against a small node:http server that
 * answers what each test scripts (the SDK's transport is what is tested here;
 * rate-limit.test.ts covers the real server's 429).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import {
  APIConnectionError, AuthenticationError, CodeGenClient, CodeloomError, ConflictError, InternalServerError, NotFoundError,
  PermissionDeniedError, RateLimitError, type RetryInfo,
} from '../src/index.js';

type Step = (req: IncomingMessage, res: ServerResponse) => void;
const problem = (status: number, code: string, headers: Record<string, string> = {}): Step => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/problem+json', 'x-request-id': `req_${code}`, ...headers });
  res.end(JSON.stringify({ type: `/docs/errors#${code}`, title: code, status, code, detail: `scripted ${code}`, request_id: `req_${code}` }));
};
const ok: Step = (_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify({ data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } })); };
const hangUp: Step = (req) => { req.socket.destroy(); };

describe('retries: connection errors, 408, 409, 429, 5xx', () => {
  let server: Server;
  let url: string;
  let script: Step[] = [];
  let hits: Array<{ at: number; path: string }> = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push({ at: Date.now(), path: req.url ?? '' });
      req.resume();
      req.on('end', () => (script.shift() ?? ok)(req, res));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)); });
  afterEach(() => { script = []; hits = []; });

  const client = (options: ConstructorParameters<typeof CodeGenClient>[0] = {}) => new CodeGenClient({ apiKey: 'cl_live_test', baseUrl: url, ...options });

  it('503 twice then 200: retried twice, counted by onRetry, with growing backoff', async () => {
    script = [problem(503, 'service_unavailable'), problem(503, 'service_unavailable'), ok];
    const retries: RetryInfo[] = [];
    const page = await client({ onRetry: (info) => retries.push(info) }).projects.list();
    expect(page.data).toEqual([]);
    expect(hits).toHaveLength(3);
    expect(retries.map((r) => [r.attempt, r.maxRetries, r.error.status, r.method, r.path])).toEqual([
      [1, 2, 503, 'GET', '/api/v1/projects'], [2, 2, 503, 'GET', '/api/v1/projects'],
    ]);
    expect(retries[0]!.error).toBeInstanceOf(InternalServerError);
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(500);
    expect(retries[1]!.delayMs).toBeGreaterThanOrEqual(1000);
    expect(hits[2]!.at - hits[1]!.at).toBeGreaterThanOrEqual(1000);
  });

  it('408, 409, 429, 500 and a dropped connection are retried; maxRetries bounds them', async () => {
    const now = { 'retry-after': '0' }; // keeps the test short: Retry-After replaces the exponential backoff
    script = [hangUp, problem(408, 'http_408', now), problem(409, 'lock_timeout', now), problem(429, 'rate_limited', now), problem(500, 'internal_error', now), ok];
    const retries: RetryInfo[] = [];
    await client({ maxRetries: 5, onRetry: (i) => retries.push(i) }).projects.list();
    expect(retries.map((r) => r.error.status)).toEqual([0, 408, 409, 429, 500]);
    expect(retries[0]!.error).toBeInstanceOf(APIConnectionError);

    // Exhausted: the last failure is thrown, with its class and fields.
    hits = [];
    script = [problem(503, 'service_unavailable'), problem(503, 'service_unavailable'), problem(503, 'service_unavailable')];
    const error = await client({ maxRetries: 1 }).projects.list().then(() => undefined, (e: unknown) => e as CodeloomError);
    expect(hits).toHaveLength(2);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 503, code: 'service_unavailable', requestId: 'req_service_unavailable' });
    expect(error!.headers?.['x-request-id']).toBe('req_service_unavailable');
  });

  it('408, 409 and 429 share one budget with 5xx: a 408 then a 409 is retried to success; the budget spent, the last failure is thrown', async () => {
    // Default maxRetries (2): the 409 after a 408 is retried like the 408 was.
    script = [problem(408, 'request_timeout'), problem(409, 'lock_timeout'), ok];
    const retries: RetryInfo[] = [];
    expect((await client({ onRetry: (i) => retries.push(i) }).projects.list()).data).toEqual([]);
    expect(retries.map((r) => [r.attempt, r.error.status])).toEqual([[1, 408], [2, 409]]);
    // The documented backoff: 0.5 s, then 1 s (doubling, jitter up to half of it, capped at 1 s).
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(500);
    expect(retries[0]!.delayMs).toBeLessThan(750);
    expect(retries[1]!.delayMs).toBeGreaterThanOrEqual(1000);
    expect(retries[1]!.delayMs).toBeLessThan(1500);
    expect(hits).toHaveLength(3);

    // Three retryable failures with a budget of 2: three attempts, and the third failure (429) is what the caller gets.
    hits = [];
    const now = { 'retry-after': '0' };
    script = [problem(409, 'lock_timeout', now), problem(408, 'request_timeout', now), problem(429, 'rate_limited', now), ok];
    const e = await client().projects.list().then(() => undefined, (err: unknown) => err);
    expect(e).toBeInstanceOf(RateLimitError);
    expect(hits).toHaveLength(3);
  });

  it('per-call maxRetries overrides the client\'s; 4xx other than 408/409/429 are not retried', async () => {
    script = [problem(503, 'service_unavailable'), ok];
    const once = await client({ maxRetries: 0 }).projects.page(1, { maxRetries: 1 });
    expect(once.data).toEqual([]);
    expect(hits).toHaveLength(2);

    hits = [];
    script = [problem(503, 'service_unavailable'), ok];
    const none = await client().projects.page(1, { maxRetries: 0 }).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(InternalServerError);
    expect(hits).toHaveLength(1);

    for (const [status, code, Class] of [[401, 'invalid_token', AuthenticationError], [403, 'insufficient_scope', PermissionDeniedError], [404, 'not_found', NotFoundError]] as const) {
      hits = [];
      script = [problem(status, code), ok];
      const e = await client().projects.get('prj_x').catch((err: unknown) => err);
      expect(e).toBeInstanceOf(Class);
      expect(e).toBeInstanceOf(CodeloomError);
      expect(CodeloomError.isInstance(e)).toBe(true);
      expect(hits).toHaveLength(1);
    }
  });

  it('waits at least Retry-After; x-should-retry: false stops retries; a 409 `conflict` is thrown at once as a ConflictError', async () => {
    script = [problem(429, 'rate_limited', { 'retry-after': '1' }), ok];
    const retries: RetryInfo[] = [];
    await client({ onRetry: (i) => retries.push(i) }).projects.list();
    expect(retries[0]!.error).toBeInstanceOf(RateLimitError);
    expect(retries[0]!.error.retryAfter).toBe(1);
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(1000);
    expect(hits[1]!.at - hits[0]!.at).toBeGreaterThanOrEqual(1000);

    hits = [];
    script = [problem(503, 'service_unavailable', { 'x-should-retry': 'false' }), ok];
    expect(await client().projects.list().then(() => undefined, (err: unknown) => err)).toBeInstanceOf(InternalServerError);
    expect(hits).toHaveLength(1);

    hits = [];
    script = [problem(409, 'conflict'), ok]; // Codeloom's state conflicts (email taken, run finished) cannot change on a repeat
    const e = await client().projects.list().then(() => undefined, (err: unknown) => err);
    expect(e).toBeInstanceOf(ConflictError);
    expect(hits).toHaveLength(1);
  });

  it('a per-call onRetry hears the waits of that call only (after the client\'s); a 429 budget_exceeded is retried only when it has Retry-After', async () => {
    script = [problem(429, 'rate_limited', { 'retry-after': '1' }), ok];
    const order: string[] = [];
    const mine: RetryInfo[] = [];
    const shared = client({ onRetry: () => order.push('client') });
    await shared.projects.list({ onRetry: (i) => { order.push('call'); mine.push(i); } });
    expect(order).toEqual(['client', 'call']);
    expect(mine[0]).toMatchObject({ attempt: 1, maxRetries: 2, method: 'GET', path: '/api/v1/projects' });
    expect(mine[0]!.error).toMatchObject({ status: 429, code: 'rate_limited', detail: 'scripted rate_limited', retryAfter: 1 });
    expect(mine[0]!.delayMs).toBeGreaterThanOrEqual(1000);
    // Another call of the same client does not tell the first call's hook.
    hits = [];
    script = [problem(503, 'service_unavailable', { 'retry-after': '0' }), ok];
    await shared.projects.list();
    expect(mine).toHaveLength(1);

    // A dollar budget that resets (a day's, a month's) sends Retry-After: waited like rate_limited when within maxRetryWait.
    hits = [];
    script = [problem(429, 'budget_exceeded', { 'retry-after': '0' }), ok];
    const waits: RetryInfo[] = [];
    await client().projects.list({ onRetry: (i) => waits.push(i) });
    expect(waits.map((w) => w.error.code)).toEqual(['budget_exceeded']);
    expect(hits).toHaveLength(2);
    // A `total` budget sends none: it never resets, so it is thrown at once, not retried with backoff.
    hits = [];
    script = [problem(429, 'budget_exceeded'), ok];
    const spent = await client().projects.list({ onRetry: (i) => waits.push(i) }).then(() => undefined, (err: unknown) => err);
    expect(spent).toBeInstanceOf(RateLimitError);
    expect(spent).toMatchObject({ status: 429, code: 'budget_exceeded', retryAfter: undefined });
    expect(hits).toHaveLength(1);
    expect(waits).toHaveLength(1);
  });

  it('an unreachable server is an APIConnectionError after the retries', async () => {
    const retries: RetryInfo[] = [];
    const e = await new CodeGenClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', maxRetries: 1, onRetry: (i) => retries.push(i) }).projects.list().then(() => undefined, (err: unknown) => err);
    expect(e).toBeInstanceOf(APIConnectionError);
    expect(e).toMatchObject({ status: 0, code: 'connection_error' });
    expect(retries).toHaveLength(1);
  });
});

describe('stream.generate retries before the first token, under the same rule and budget', () => {
  let wss: WebSocketServer;
  let url: string;
  /** One entry per connection: what to answer each `generate` frame on it (an error frame's data, a close, or the result). */
  let connections: Array<Array<{ status: number; code: string; retry_after?: number } | 'close' | 'complete'>> = [];
  let generates = 0;
  let opened = 0;
  beforeAll(async () => {
    wss = new WebSocketServer({ port: 0, host: '127.0.0.1', path: '/api/v1/stream' });
    await new Promise<void>((r) => wss.once('listening', () => r()));
    url = `http://127.0.0.1:${(wss.address() as AddressInfo).port}`;
    wss.on('connection', (ws) => {
      opened++;
      const answers = connections.shift() ?? ['complete'];
      ws.on('message', (raw) => {
        const frame = JSON.parse(String(raw)) as { type: string; id?: string };
        if (frame.type === 'auth') return ws.send(JSON.stringify({ event: 'connected', data: { connection_id: 'c', user_id: 'u' } }));
        if (frame.type !== 'generate') return;
        generates++;
        const next = answers.shift() ?? 'complete';
        if (next === 'close') return ws.terminate();
        if (next === 'complete') {
          ws.send(JSON.stringify({ event: 'token', id: frame.id, data: 'ok' }));
          return ws.send(JSON.stringify({ event: 'complete', id: frame.id, data: { id: 'gen_1', code: 'ok', language: 'python', model: 'sandbox', tokens_used: 1, processing_time: 1, output: 'ok' } }));
        }
        ws.send(JSON.stringify({ event: 'error', id: frame.id, data: { ...next, message: next.code } }));
      });
    });
  });
  afterAll(async () => { for (const c of wss.clients) c.terminate(); await new Promise((r) => wss.close(r)); });
  afterEach(() => { connections = []; generates = 0; opened = 0; });

  const streamClient = (options: ConstructorParameters<typeof CodeGenClient>[0] = {}) => new CodeGenClient({ apiKey: 'cl_live_test', baseUrl: url, WebSocket, ...options });

  it('a 503, a 408 and a 409 error frame are retried like HTTP answers; a dropped connection is opened again', async () => {
    connections = [[{ status: 503, code: 'service_unavailable', retry_after: 0 }, { status: 408, code: 'request_timeout', retry_after: 0 }, 'close'], ['complete']];
    const retries: RetryInfo[] = [];
    const result = await streamClient({ maxRetries: 3, onRetry: (i) => retries.push(i) }).stream.generate({ prompt: 'x' }).result;
    expect(result.output).toBe('ok');
    expect(retries.map((r) => [r.attempt, r.error.status, r.path])).toEqual([[1, 503, '/api/v1/stream'], [2, 408, '/api/v1/stream'], [3, 0, '/api/v1/stream']]);
    expect(generates).toBe(4);
    expect(opened).toBe(2);
  });

  it('a per-call onRetry hears a rate_limited error frame\'s wait with its message and retry_after; budget_exceeded without retry_after is not retried', async () => {
    connections = [[{ status: 429, code: 'rate_limited', retry_after: 1 }, 'complete']];
    const waits: RetryInfo[] = [];
    const client = streamClient();
    const started = Date.now();
    const result = await client.stream.generate({ prompt: 'x' }, { onRetry: (i) => waits.push(i) }).result;
    expect(result.output).toBe('ok');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({ attempt: 1, path: '/api/v1/stream' });
    expect(waits[0]!.error).toMatchObject({ status: 429, code: 'rate_limited', detail: 'rate_limited', retryAfter: 1 });
    expect(waits[0]!.delayMs).toBeGreaterThanOrEqual(1000);

    generates = 0;
    connections = [[{ status: 429, code: 'budget_exceeded' }, 'complete']];
    const e = await client.stream.generate({ prompt: 'x' }, { onRetry: (i) => waits.push(i) }).result.then(() => undefined, (err: unknown) => err);
    expect(e).toMatchObject({ status: 429, code: 'budget_exceeded' });
    expect(generates).toBe(1);
    expect(waits).toHaveLength(1);
  });

  it('the budget is maxRetries in all (a 408 then a 409 with maxRetries 1 ends in the 409); a 409 `conflict` is not retried', async () => {
    connections = [[{ status: 408, code: 'request_timeout', retry_after: 0 }, { status: 409, code: 'lock_timeout', retry_after: 0 }]];
    const e = await streamClient({ maxRetries: 1 }).stream.generate({ prompt: 'x' }).result.then(() => undefined, (err: unknown) => err);
    expect(e).toBeInstanceOf(ConflictError);
    expect(generates).toBe(2);

    generates = 0;
    connections = [[{ status: 409, code: 'conflict' }]];
    const c = await streamClient().stream.generate({ prompt: 'x' }).result.then(() => undefined, (err: unknown) => err);
    expect(c).toMatchObject({ status: 409, code: 'conflict' });
    expect(generates).toBe(1);
  });
});
