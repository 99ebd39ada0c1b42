/**
 * The cluster-wide verification scheduler against a real Redis (TEST_REDIS_URL): two schedulers on their
 * own connections stand for two instances. The per-organization caps hold between them (running ≤
 * PER_ACCOUNT, admitted ≤ PER_ACCOUNT + QUEUE, one more a 429 with Retry-After), waiters start first come
 * first served across instances and are woken by a message, a dead instance's leases run out and free
 * its places and slots, a caller that leaves while waiting is gone at once, a holder that loses its lease
 * stops, and Redis unreachable is a 503. Every wait is bounded; nothing asserts on elapsed time.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError, CancelledError, retryAfterOf } from '../../errors.js';
import { loadConfig } from '../../config/load-config.js';
import { createRedisClient } from '../../storage/redis-client.js';
import { schedulerLimits, VerificationService } from './verification-service.js';
import { RedisVerifyScheduler, type RedisSchedulerOptions } from './redis-verify-scheduler.js';
import type { SchedulerLimits, VerifyTicket } from './verify-scheduler.js';

const REDIS = process.env.TEST_REDIS_URL;
if (!REDIS) console.log('skipping Redis verification scheduler tests: TEST_REDIS_URL is not set');

/** A ticket's acquire, observed: whether it started, or how it failed. */
function track(ticket: VerifyTicket, signal?: AbortSignal) {
  const t = { ticket, started: false, error: undefined as unknown };
  ticket.acquire(signal).then(() => { t.started = true; }, (error: unknown) => { t.error = error; });
  return t;
}

async function until(ok: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await ok());) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function refusal(work: Promise<unknown>): Promise<AppError> {
  const error = await work.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe.skipIf(!REDIS)('RedisVerifyScheduler (two instances on one Redis)', () => {
  let prefix = '';
  const clients: Redis[] = [];
  const schedulers: RedisVerifyScheduler[] = [];
  const org = (name: string) => `${name}_${randomBytes(4).toString('hex')}`;

  /** One instance: its own connection, the test's prefix. A message wakes waiters; the poll (a minute by default here) is only a fallback. */
  async function instance(limits: Partial<SchedulerLimits> = {}, options: RedisSchedulerOptions = {}) {
    prefix ||= `test-verify-${randomBytes(6).toString('hex')}:`;
    const redis = await createRedisClient(REDIS!, { commandTimeoutMs: 2_000 });
    clients.push(redis);
    const s = new RedisVerifyScheduler(redis, { concurrency: 4, perAccount: 1, queue: 1, maxRetryAfterS: 120, ...limits }, { prefix, pollMs: 60_000, ...options });
    schedulers.push(s);
    return { s, redis };
  }

  afterEach(async () => {
    for (const s of schedulers.splice(0)) await s.close();
    for (const c of clients.splice(0)) c.disconnect();
    if (prefix) {
      const redis = await createRedisClient(REDIS!, { commandTimeoutMs: 2_000 });
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
    prefix = '';
  });

  it('one organization runs at most PER_ACCOUNT and has at most PER_ACCOUNT + QUEUE in progress across both; one more is a 429, another organization is unaffected', async () => {
    const { s: a } = await instance();
    const { s: b } = await instance();
    const acme = org('acme');
    const first = track(await a.admit(acme));
    const second = track(await b.admit(acme));
    await until(() => first.started, 'the first starts');
    // b's waiter sees the slot taken on a: it waits.
    await b.settled();
    expect(second.started).toBe(false);
    expect(await a.clusterStats(acme)).toEqual({ running: 1, waiting: 1, admitted: 2 });
    expect(b.stats(acme)).toEqual({ running: 0, waiting: 1, admitted: 1 });

    for (const s of [a, b]) {
      const error = await refusal(s.admit(acme));
      expect(error.code).toBe('rate_limited');
      expect(error.message).toMatch(/At most 1 verification of an organization run at once and 1 more wait across all instances; this organization has 2 in progress/);
      expect(retryAfterOf(error)).toBeGreaterThanOrEqual(1);
      expect(retryAfterOf(error)).toBeLessThanOrEqual(120);
    }
    // Another organization starts at once on either instance.
    const other = track(await b.admit(org('other')));
    await until(() => other.started, 'another organization starts');

    // The slot frees on a: b's waiter is told (no poll for a minute here) and starts; a place frees for a new request.
    first.ticket.release();
    await until(() => second.started, 'the waiter on the other instance starts');
    expect(await a.clusterStats(acme)).toEqual({ running: 1, waiting: 0, admitted: 1 });
    const third = track(await a.admit(acme));
    await a.settled();
    expect(third.started).toBe(false);
    second.ticket.release();
    await until(() => third.started, 'the third starts');
    third.ticket.release();
    other.ticket.release();
    await Promise.all([a.settled(), b.settled()]);
    expect(await a.clusterStats(acme)).toEqual({ running: 0, waiting: 0, admitted: 0 });
  });

  it('first come, first served across instances: a freed slot goes to the organization\'s oldest waiter, wherever it waits', async () => {
    const { s: a } = await instance({ queue: 4 });
    const { s: b } = await instance({ queue: 4 });
    const acme = org('acme');
    const holder = track(await a.admit(acme));
    await until(() => holder.started, 'the holder starts');
    // Admitted in the order b, a, b; they ask for a slot in the opposite order.
    const t1 = await b.admit(acme);
    const t2 = await a.admit(acme);
    const t3 = await b.admit(acme);
    const w3 = track(t3);
    await b.settled();
    const w2 = track(t2);
    await a.settled();
    const w1 = track(t1);
    await b.settled();
    expect(await a.clusterStats(acme)).toEqual({ running: 1, waiting: 3, admitted: 4 });
    const settle = () => Promise.all([a.settled(), b.settled()]);
    holder.ticket.release(); // on a, where t2 waits: the slot goes to t1 on b all the same
    await until(() => w1.started, 't1 starts');
    await settle();
    expect([w2.started, w3.started]).toEqual([false, false]);
    w1.ticket.release();
    await until(() => w2.started, 't2 starts');
    await settle();
    expect(w3.started).toBe(false);
    w2.ticket.release();
    await until(() => w3.started, 't3 starts');
    w3.ticket.release();
  });

  it('admissions sent back to back line up in the order Redis took them (sub-millisecond admission times)', async () => {
    const { s, redis } = await instance({ queue: 7 });
    const acme = org('acme');
    const tickets = await Promise.all(Array.from({ length: 8 }, () => s.admit(acme)));
    // [member, score] pairs, flat or nested depending on the protocol version.
    const places = (await redis.call('ZRANGE', `${prefix}verify:{${acme}}:places`, '0', '-1', 'WITHSCORES') as unknown[]).flat() as string[];
    const ids = places.filter((_, i) => i % 2 === 0);
    const scores = places.filter((_, i) => i % 2 === 1).map(Number);
    expect(ids).toEqual(tickets.map((t) => (t as unknown as { id: string }).id));
    expect(new Set(scores).size).toBe(8);
    for (const t of tickets) t.release();
  });

  it('a repair keeps its place: a finished ticket that asks again goes before newer requests of another instance', async () => {
    const { s: a } = await instance({ queue: 4 });
    const { s: b } = await instance({ queue: 4 });
    const acme = org('acme');
    const old = await a.admit(acme);
    const first = track(old);
    await until(() => first.started, 'attempt 1 starts');
    const newer = track(await b.admit(acme));
    await b.settled();
    old.finish(); // attempt 1 over: the slot goes to b's newer request while a's model repairs
    await until(() => newer.started, 'the newer request starts');
    const later = track(await b.admit(acme));
    const repair = track(old);
    await Promise.all([a.settled(), b.settled()]);
    expect(await a.clusterStats(acme)).toEqual({ running: 1, waiting: 2, admitted: 3 });
    newer.ticket.release();
    await until(() => repair.started, 'the repair starts');
    await b.settled();
    expect(later.started).toBe(false);
    old.release();
    await until(() => later.started, 'the later request starts');
    later.ticket.release();
  });

  it('the instance cap stays local: an instance with no free slot leaves the organization\'s slot to another instance\'s waiter', async () => {
    const { s: a } = await instance({ concurrency: 1, perAccount: 2, queue: 4 });
    const { s: b } = await instance({ concurrency: 1, perAccount: 2, queue: 4 });
    const acme = org('acme');
    const busy = track(a.background(undefined)); // a's one slot, taken by internal work (no organization, Redis is not asked)
    await until(() => busy.started, 'internal work starts');
    const onA = track(await a.admit(acme));
    await a.settled();
    expect(onA.started).toBe(false);
    const onB = track(await b.admit(acme));
    await until(() => onB.started, 'b starts its own waiter');
    busy.ticket.release();
    await until(() => onA.started, 'a starts once its slot frees');
    expect(await a.clusterStats(acme)).toEqual({ running: 2, waiting: 0, admitted: 2 });
    onA.ticket.release();
    onB.ticket.release();
  });

  it('background work waits under the organization\'s cap across instances but takes no place and is never refused', async () => {
    const { s: a } = await instance({ queue: 0 });
    const { s: b } = await instance({ queue: 0 });
    const acme = org('acme');
    const request = track(await a.admit(acme));
    await until(() => request.started, 'the request starts');
    const bg = track(b.background(acme));
    await b.settled();
    expect(bg.started).toBe(false);
    expect(await a.clusterStats(acme)).toEqual({ running: 1, waiting: 1, admitted: 1 });
    // The place is taken (queue 0): one more request is refused, background work is not.
    expect((await refusal(b.admit(acme))).code).toBe('rate_limited');
    request.ticket.release();
    await until(() => bg.started, 'the background work starts');
    bg.ticket.release();
    await b.settled();
    expect(await a.clusterStats(acme)).toEqual({ running: 0, waiting: 0, admitted: 0 });
  });

  it('a caller that leaves while waiting is out at once, never starts, and its place frees for the whole cluster', async () => {
    const { s: a } = await instance();
    const { s: b } = await instance();
    const acme = org('acme');
    const holder = track(await a.admit(acme));
    await until(() => holder.started, 'the holder starts');
    const gone = new AbortController();
    const waiter = track(await b.admit(acme), gone.signal);
    await b.settled();
    expect((await refusal(a.admit(acme))).code).toBe('rate_limited');
    gone.abort();
    await Promise.resolve();
    expect(waiter.error).toBeInstanceOf(CancelledError);
    expect(waiter.ticket.status).toBe('released');
    expect(b.stats(acme)).toEqual({ running: 0, waiting: 0, admitted: 0 });
    await b.settled();
    expect(await a.clusterStats(acme)).toEqual({ running: 1, waiting: 0, admitted: 1 });
    const next = track(await a.admit(acme));
    holder.ticket.release();
    await until(() => next.started, 'the next request starts');
    expect(waiter.started).toBe(false);
    next.ticket.release();
  });

  it('a dead instance\'s places and slots free themselves when their leases run out', async () => {
    const { s: dying, redis } = await instance({}, { leaseMs: 600, renewMs: 150 });
    const { s: alive } = await instance({}, { leaseMs: 600, renewMs: 150, pollMs: 100 });
    const acme = org('acme');
    const held = track(await dying.admit(acme));
    await until(() => held.started, 'the dying instance runs one');
    const waiter = track(await alive.admit(acme));
    // Renewals keep its lease well past 600 ms while it lives.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(waiter.started).toBe(false);
    expect((await refusal(alive.admit(acme))).code).toBe('rate_limited');
    // The instance dies: no release, no more renewals.
    await dying.close();
    redis.disconnect();
    await until(() => waiter.started, 'the waiter starts once the dead lease runs out');
    expect(await alive.clusterStats(acme)).toEqual({ running: 1, waiting: 0, admitted: 1 });
    const next = await alive.admit(acme);
    next.release();
    waiter.ticket.release();
  });

  it('a holder whose lease Redis lost stops: its running verification is revoked with 503, its waiter fails with 503', async () => {
    const { s, redis } = await instance({ perAccount: 1, queue: 2 }, { leaseMs: 600, renewMs: 100 });
    const acme = org('acme');
    const running = track(await s.admit(acme));
    await until(() => running.started, 'it runs');
    const waiter = track(await s.admit(acme));
    await s.settled();
    expect(running.ticket.revoked?.aborted).toBe(false);
    // Redis loses the organization's keys (a restart without persistence, a FLUSHDB).
    await redis.del(...['lease', 'places', 'queue', 'running'].map((k) => `${prefix}verify:{${acme}}:${k}`));
    await until(() => running.ticket.revoked?.aborted === true && waiter.error !== undefined, 'both are given up');
    expect((running.ticket.revoked!.reason as AppError).code).toBe('service_unavailable');
    expect((waiter.error as AppError).code).toBe('service_unavailable');
    expect(waiter.started).toBe(false);
    // A lost place cannot be used again; the owner releases it.
    await expect(waiter.ticket.acquire()).rejects.toMatchObject({ code: 'service_unavailable' });
    running.ticket.release();
    waiter.ticket.release();
  });

  it('Retry-After: the usual lifetime of a place minus the age of the organization\'s oldest, at most the verification time limit', async () => {
    const { s, redis } = await instance({ perAccount: 1, queue: 0, maxRetryAfterS: 120 });
    const acme = org('acme');
    const stats = `${prefix}verify:{${acme}}:stats`;
    const t = await s.admit(acme);
    // Before any place ended: 10 s are assumed.
    const first = retryAfterOf(await refusal(s.admit(acme)))!;
    expect(first).toBeGreaterThanOrEqual(1);
    expect(first).toBeLessThanOrEqual(10);
    // A place that ended updates the organization's usual lifetime.
    t.release();
    await s.settled();
    expect(Number(await redis.hget(stats, 'life'))).toBeGreaterThanOrEqual(0);
    const held = await s.admit(acme);
    await redis.hset(stats, 'life', 45_000);
    const seconds = retryAfterOf(await refusal(s.admit(acme)))!;
    expect(seconds).toBeGreaterThanOrEqual(40);
    expect(seconds).toBeLessThanOrEqual(45);
    await redis.hset(stats, 'life', 9_000_000);
    expect(retryAfterOf(await refusal(s.admit(acme)))).toBe(120);
    held.release();
  });

  it('Redis unreachable: admitting and waiting answer 503 service_unavailable at once', async () => {
    const { s, redis } = await instance();
    const acme = org('acme');
    const admitted = await s.admit(acme);
    redis.disconnect();
    const admit = await refusal(s.admit(acme));
    expect(admit.code).toBe('service_unavailable');
    expect(retryAfterOf(admit)).toBe(1);
    const waiting = track(admitted);
    await until(() => waiting.error !== undefined, 'the acquire fails');
    expect((waiting.error as AppError).code).toBe('service_unavailable');
    expect(admitted.status).toBe('idle');
    admitted.release();
  });
});

/**
 * The holder's side of a lost lease, through the verification service and a real sandbox: a verification
 * whose place Redis lost while its checks run is stopped (its sandbox killed, no process of it left) and
 * ends `error` saying so, instead of running on beyond the organization's cap.
 */
const sandbox = REDIS ? await new VerificationService(loadConfig({})).status() : { available: false, reason: 'TEST_REDIS_URL is not set' };
if (REDIS && !sandbox.available) console.log(`skipping the lost-lease sandbox test: ${sandbox.reason}`);

describe.skipIf(!REDIS || !sandbox.available)('a verification whose lease is lost while it runs', () => {
  it('is stopped and ends `error`', async () => {
    const marker = `lost-lease-sleeper-${randomBytes(5).toString('hex')}`;
    const sleepers = () => readdirSync('/proc').filter((d) => {
      try { return /^\d+$/.test(d) && readFileSync(`/proc/${d}/cmdline`, 'latin1').includes(marker) && readFileSync(`/proc/${d}/comm`, 'latin1').trim() !== 'bwrap'; } catch { return false; }
    }).length;
    const prefix = `test-verify-${randomBytes(6).toString('hex')}:`;
    const redis = await createRedisClient(REDIS!, { commandTimeoutMs: 2_000 });
    const config = loadConfig({ CODELOOM_VERIFY_TIMEOUT: '120' });
    const scheduler = new RedisVerifyScheduler(redis, schedulerLimits(config), { prefix, leaseMs: 1_000, renewMs: 100 });
    const service = new VerificationService(config, scheduler);
    try {
      const ticket = await service.admit('org_lost');
      const files = [{ path: 'tests/test_slow.py', content: `import subprocess\nimport sys\nimport unittest\n\n\nclass TestSlow(unittest.TestCase):\n    def test_slow(self):\n        subprocess.run([sys.executable, '-c', 'import time; time.sleep(300)', '${marker}'])\n` }];
      const result = service.verify('python', files, { attempt: 1, ticket, org: 'org_lost' });
      await until(() => sleepers() === 1, 'the sleeper runs', 60_000);
      await redis.del(...['lease', 'places', 'queue', 'running'].map((k) => `${prefix}verify:{org_lost}:${k}`));
      const attempt = await result;
      expect(attempt.status).toBe('error');
      expect(attempt.reason).toMatch(/lost its place/);
      await until(() => sleepers() === 0, 'the sandbox is gone', 10_000);
      ticket.release();
      await scheduler.settled();
    } finally {
      await service.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  }, 120_000);
});
