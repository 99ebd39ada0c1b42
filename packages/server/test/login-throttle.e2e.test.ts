/**
 * The login throttle takes a failure slot BEFORE it checks a password, per account (5 in
 * 15 minutes) and per client address (20), atomically on the memory and Redis stores: 60
 * wrong passwords sent at once check exactly as many as the limit allows. A password that
 * was checked answers 401 `invalid_credentials`; one refused unchecked answers 429.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clusterEnabled, startCluster, type Cluster } from './helpers/cluster.js';
import { randomBytes } from 'node:crypto';
import { startTestServer, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { awayFromWindowEnd } from './helpers/limit-windows.js';

/** A random client address: spawned servers keep their counters in the shared Redis under one prefix, so addresses must not repeat across runs. */
const nextIp = () => `10.${[...randomBytes(3)].join('.')}`;

const login = (base: string, email: string, password: string, ip: string) =>
  request(`${base}/api/v1/auth/login`, { body: { email, password }, headers: { 'x-forwarded-for': ip } });

/**
 * The throttle's windows are fixed (aligned to multiples of their length), so a burst that straddles a
 * window's end is counted in two windows. The servers here use one-day windows, and each test starts
 * only when at least a minute of the current one is left.
 */
const WINDOW_SEC = 86_400;
const THROTTLE_ENV = { CODELOOM_LOGIN_WINDOW: String(WINDOW_SEC) };

/** Tallies answers; every refusal must be a 429 with Retry-After. */
function tally(responses: Awaited<ReturnType<typeof login>>[]) {
  const checked = responses.filter((r) => r.status === 401);
  const refused = responses.filter((r) => r.status === 429);
  expect(checked.length + refused.length, responses.map((r) => r.status).join(',')).toBe(responses.length);
  for (const r of checked) expect(r.body.code).toBe('invalid_credentials');
  for (const r of refused) {
    expect(r.body.code).toBe('rate_limited');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
  }
  return checked.length;
}

/** The same three properties on any set of instances (requests are spread over them). */
function throttleSuite(instances: () => string[]) {
  const base = (i: number) => instances()[i % instances().length]!;
  beforeEach(() => awayFromWindowEnd(60, WINDOW_SEC), 70_000);

  it('60 concurrent wrong passwords for one account (from 60 addresses): exactly 5 are checked', async () => {
    const u = await registerUser(base(0), { ip: nextIp() });
    const responses = await Promise.all(Array.from({ length: 60 }, (_, i) => login(base(i), u.email, `wrong password ${i}`, nextIp())));
    expect(tally(responses)).toBe(5);
    // The account is throttled now, for the right password too.
    expect((await login(base(1), u.email, u.password, nextIp())).status).toBe(429);
  });

  it('60 concurrent wrong passwords from one address (for 60 accounts): exactly 20 are checked', async () => {
    const ip = nextIp();
    const responses = await Promise.all(Array.from({ length: 60 }, (_, i) => login(base(i), `nobody-${i}-${Math.random()}@example.com`, 'wrong password', ip)));
    expect(tally(responses)).toBe(20);
  });

  it('a correct password gives its slot back: only failures count', async () => {
    const u = await registerUser(base(0), { ip: nextIp() });
    for (let i = 0; i < 4; i++) expect((await login(base(i), u.email, 'wrong password', nextIp())).status).toBe(401);
    // One slot is left, and each sign-in holds it while its password is checked: one at a time, all pass.
    for (let i = 0; i < 10; i++) expect((await login(base(i), u.email, u.password, nextIp())).status).toBe(200);
    expect((await login(base(0), u.email, 'wrong password', nextIp())).status).toBe(401);
    expect((await login(base(1), u.email, 'wrong password', nextIp())).status).toBe(429);
  });
}

describe('login throttle on one instance (memory store)', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer({ env: THROTTLE_ENV }); });
  afterAll(async () => { await t?.close(); });
  throttleSuite(() => [t.url]);
});

if (!clusterEnabled) console.log('skipping the two-instance login throttle test: it needs TEST_DATABASE_URL and TEST_REDIS_URL');

describe.skipIf(!clusterEnabled)('login throttle across two server processes on PostgreSQL + Redis', () => {
  let cluster: Cluster;
  beforeAll(async () => { cluster = await startCluster('login', { env: THROTTLE_ENV }); }, 60_000);
  afterAll(() => cluster?.stop());

  throttleSuite(() => cluster.servers.map((s) => s.url));
});
