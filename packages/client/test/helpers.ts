/** Shared set-up of the client tests: real servers from the server package, one fresh client address per user. */
import WebSocket from 'ws';
import { nextIp, startTestServer, type TestServer } from '../../server/test/helpers/test-server.js';
import { Codeloom, type AuthSession, type ClientOptions, type Credentials, type FetchLike } from '../src/index.js';

export { WebSocket, nextIp, startTestServer, type TestServer };

let userSeq = 0;

/** A client of `t` whose requests come from a fresh address (the test server trusts X-Forwarded-For), with `ws` as its WebSocket. */
export function clientFor(t: TestServer, credentials?: Credentials | null, options: ClientOptions = {}, ip = nextIp()): Codeloom {
  return new Codeloom(credentials, { baseUrl: t.url, WebSocket, maxRetries: 0, ...options, headers: { 'x-forwarded-for': ip, ...options.headers } });
}

/** Registers a fresh account through the SDK; the returned client is signed in with its session. */
export async function newUser(t: TestServer, options: ClientOptions = {}): Promise<{ client: Codeloom; session: AuthSession; email: string; password: string; ip: string }> {
  const ip = nextIp();
  const client = clientFor(t, null, options, ip);
  const email = `sdk${++userSeq}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const password = 'correct horse battery';
  const session = await client.auth.register({ email, password, name: `SDK User ${userSeq}` });
  return { client, session, email, password, ip };
}

/** A fetch that records every call (url, method, headers, time) before passing it on. */
export function recordingFetch(inner: FetchLike = (input, init) => fetch(input, init)) {
  const calls: Array<{ url: string; method: string; headers: Record<string, string>; at: number; status?: number; retryAfter?: string | null }> = [];
  const wrapped: FetchLike = async (input, init) => {
    const entry = { url: input, method: init.method ?? 'GET', headers: { ...(init.headers as Record<string, string>) }, at: Date.now() } as (typeof calls)[number];
    calls.push(entry);
    const res = await inner(input, init);
    entry.status = res.status;
    entry.retryAfter = res.headers.get('retry-after');
    return res;
  };
  return { fetch: wrapped, calls };
}

/** Polls `check` until it returns a value other than undefined (gently: a free account has 100 requests a minute). */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000, intervalMs = 150): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
