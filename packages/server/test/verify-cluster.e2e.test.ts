/**
 * Verification admission across two server processes on one PostgreSQL and one Redis (CONTRACT §12.1),
 * with CODELOOM_VERIFY_PER_ACCOUNT=1 and CODELOOM_VERIFY_QUEUE=1: one organization's verifying requests
 * spread over both instances never run more than one sandbox at once, counted from outside (the host's
 * /proc, every 10 ms, for the marked sleeper each generated test starts); its third request is refused with
 * 429 and Retry-After on either instance before its model is called; another organization's verification
 * starts at once; a freed slot goes to the waiter on the other instance; a waiter whose client leaves frees
 * its place for the whole cluster and never starts. Each verification is ended by its client leaving.
 * Skipped, saying so, without TEST_DATABASE_URL and TEST_REDIS_URL or where bubblewrap cannot run.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load-config.js';
import { VerificationService } from '../src/modules/verify/verification-service.js';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { clusterEnabled, startCluster, type Cluster } from './helpers/cluster.js';
import { registerUser, request } from './helpers/http.js';
import { sseRequest, type Streamed } from './helpers/sse-request.js';
import { nextIp, TEST_REDIS_URL } from './helpers/test-server.js';
import type { SpawnedServer } from './helpers/spawn-server.js';

const probe = clusterEnabled ? await new VerificationService(loadConfig({})).status() : { available: false, reason: 'TEST_DATABASE_URL and TEST_REDIS_URL are not set' };
if (!probe.available) console.log(`skipping the verification cluster tests: ${probe.reason}`);

const MARKER = `verify-cluster-sleeper-${randomBytes(5).toString('hex')}`;
/** A test that starts a marked sleeper (its command line carries MARKER) and waits for it: the sandbox runs until its client leaves. */
const SLOW = [
  '```python tests/test_slow.py',
  'import subprocess',
  'import sys',
  'import unittest',
  '',
  '',
  'class TestSlow(unittest.TestCase):',
  '    def test_slow(self):',
  `        subprocess.run([sys.executable, '-c', 'import time; time.sleep(300)', '${MARKER}'])`,
  '```',
  '',
].join('\n');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Live host processes carrying the marker (zombies have an empty command line; bwrap is left out). */
function sleepers(): number {
  let n = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'latin1').includes(MARKER) && readFileSync(`/proc/${d}/comm`, 'latin1').trim() !== 'bwrap') n++;
    } catch { /* gone */ }
  }
  return n;
}

/** The most sleepers seen at once since the last `reset`, sampled every 10 ms. */
function watchSleepers() {
  let max = 0;
  const timer = setInterval(() => { max = Math.max(max, sleepers()); }, 10);
  return {
    get max() { return Math.max(max, sleepers()); },
    reset() { max = sleepers(); },
    stop() { clearInterval(timer); },
  };
}

describe.skipIf(!probe.available)('verification admission across two server processes on PostgreSQL + Redis', () => {
  const prefix = `verify-cluster-${randomBytes(6).toString('hex')}:`;
  let fake: FakeVendor;
  let cluster: Cluster;
  let x: SpawnedServer;
  let y: SpawnedServer;
  let redis: Redis;
  let watch: ReturnType<typeof watchSleepers>;
  const open: Streamed[] = [];

  beforeAll(async () => {
    fake = await startOpenAIFake({ script: { reply: SLOW } });
    cluster = await startCluster('verify', { env: {
      OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_UPSTREAM_RETRIES: '0',
      CODELOOM_VERIFY_CONCURRENCY: '2', CODELOOM_VERIFY_PER_ACCOUNT: '1', CODELOOM_VERIFY_QUEUE: '1', CODELOOM_VERIFY_TIMEOUT: '400',
      CODELOOM_REDIS_PREFIX: prefix,
    } });
    [x, y] = cluster.servers as [SpawnedServer, SpawnedServer];
    redis = new Redis(TEST_REDIS_URL!);
    watch = watchSleepers();
  }, 60_000);

  // Every stream a test opened is left, so no sandbox outlives its test.
  afterEach(async () => {
    for (const s of open.splice(0)) s.leave();
    await until(async () => (await cluster_('running')) + (await cluster_('queue')) + (await cluster_('places')) === 0 && sleepers() === 0, 'every verification ended');
  });

  afterAll(async () => {
    watch?.stop();
    const keys = redis ? await redis.keys(`${prefix}*`) : [];
    if (keys.length) await redis.del(...keys);
    redis?.disconnect();
    await cluster?.stop();
    await fake?.close();
  });

  /** One kind of the scheduler's per-organization sets in Redis, summed over organizations (only this suite's, by its prefix). */
  async function cluster_(kind: 'running' | 'queue' | 'places'): Promise<number> {
    let n = 0;
    for (const key of await redis.keys(`${prefix}verify:*:${kind}`)) n += await redis.zcard(key);
    return n;
  }

  async function until(ok: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
    for (const deadline = Date.now() + timeoutMs; !(await ok());) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await sleep(25);
    }
  }

  const fresh = async (server: SpawnedServer) => (await registerUser(server.url, { ip: nextIp() })).token;
  const body = (extra: Record<string, unknown> = {}) => ({ prompt: 'slow', language: 'python', model: 'gpt-test', max_tokens: 200, verify: true, ...extra });
  const json = (server: SpawnedServer, token: string) => request(`${server.url}/api/v1/generate`, { method: 'POST', token, body: body() });

  /** A streamed generation on its own connection, read as it arrives (kept, so afterEach can leave what is still open). */
  async function stream(server: SpawnedServer, token: string): Promise<Streamed> {
    const s = await sseRequest(`${server.url}/api/v1/generate`, { token, body: body({ stream: true }), headers: { 'x-forwarded-for': nextIp() } });
    open.push(s);
    return s;
  }

  it('one organization runs one sandbox at a time over both instances; its third request is a 429 with Retry-After on either; another organization starts at once; a freed slot goes to the waiter on the other instance', async () => {
    fake.reset();
    fake.script({ reply: SLOW });
    const [a, b] = [await fresh(x), await fresh(y)];
    watch.reset();
    const a1 = await stream(x, a);
    await a1.waitFor('verify_started');
    await until(() => sleepers() === 1, 'a1\'s sleeper runs');
    const a2 = await stream(y, a);
    expect(a2.status).toBe(200);
    // a2's model answered on y; its verification waits in the organization's line, held by a1 on x (were the
    // caps per instance, it would start on y).
    await until(async () => a2.has('verify_started') || (await cluster_('queue')) === 1, 'a2 waits or starts');
    expect(a2.has('verify_started'), 'a2 started while a1 runs on the other instance').toBe(false);
    expect(await cluster_('running')).toBe(1);
    const calls = fake.requests.length;

    for (const server of [x, y]) {
      const refused = await json(server, a);
      expect(refused.status, refused.text).toBe(429);
      expect(refused.body).toMatchObject({ code: 'rate_limited', detail: expect.stringMatching(/At most 1 verification of an organization run at once and 1 more wait across all instances/) });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(400);
    }
    // None of the refused requests reached the model.
    expect(fake.requests.length).toBe(calls);
    expect(a2.has('verify_started')).toBe(false);
    expect(watch.max).toBe(1);

    // Another organization, on the instance where a2 waits: its verification starts at once.
    const b1 = await stream(y, b);
    await b1.waitFor('verify_started');
    await until(() => sleepers() === 2, 'b1\'s sleeper runs too');
    expect(a2.has('verify_started')).toBe(false);

    // a1's client leaves: its sandbox is killed and the slot goes to a2 on the other instance.
    a1.leave();
    await a2.waitFor('verify_started', 60_000);
    await until(() => sleepers() === 2, 'a2\'s sleeper runs');
    expect(await cluster_('running')).toBe(2);
    expect(await cluster_('queue')).toBe(0);
    // Never more than one of a's sandboxes with b's one.
    expect(watch.max).toBe(2);
  }, 180_000);

  it('a waiter whose client leaves, on one instance, frees its place for the other at once and never starts', async () => {
    fake.reset();
    fake.script({ reply: SLOW });
    const a = await fresh(x);
    watch.reset();
    const a1 = await stream(x, a);
    await a1.waitFor('verify_started');
    await until(() => sleepers() === 1, 'a1\'s sleeper runs');
    const a2 = await stream(y, a);
    await until(async () => a2.has('verify_started') || (await cluster_('queue')) === 1, 'a2 waits or starts');
    expect(a2.has('verify_started'), 'a2 started while a1 runs on the other instance').toBe(false);
    expect((await json(x, a)).status).toBe(429);
    a2.leave();
    await until(async () => (await cluster_('queue')) === 0 && (await cluster_('places')) === 1, 'a2\'s place is free');
    // The place is free on the other instance: the organization's next request is admitted there, and waits.
    const a3 = await stream(x, a);
    expect(a3.status).toBe(200);
    await until(async () => (await cluster_('queue')) === 1, 'a3 waits');
    a1.leave();
    await a3.waitFor('verify_started', 60_000);
    await until(() => sleepers() === 1, 'a3\'s sleeper runs');
    await a2.ended;
    expect(a2.has('verify_started')).toBe(false);
    expect(watch.max).toBe(1);
  }, 180_000);
});
