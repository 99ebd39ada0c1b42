import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { MemoryLimitStore } from './memory-limit-store.js';
import { RedisLimitStore } from './redis-limit-store.js';
import { RateLimiter } from './rate-limiter.js';
import type { LimitStore } from './limit-store.js';

const REDIS = process.env.TEST_REDIS_URL;
if (!REDIS) console.log('skipping Redis limit-store tests: TEST_REDIS_URL is not set');

/** The same behaviour on every store: a fake clock moves time, so windows can be crossed without waiting. */
function limiterSuite(name: string, make: (now: () => number) => Promise<{ store: LimitStore; done(): Promise<void> }>, skip = false) {
  describe.skipIf(skip)(`RateLimiter on ${name}`, () => {
    let clock = Date.UTC(2026, 0, 1, 10, 0, 0);
    const now = () => clock;
    let env: { store: LimitStore; done(): Promise<void> } | undefined;
    afterEach(async () => { await env?.done(); });
    const subject = () => `test-${Math.random().toString(36).slice(2)}`;

    it('admits exactly the per-minute limit, then refuses with the minute window reported', async () => {
      env = await make(now);
      const limiter = new RateLimiter(env.store);
      const s = subject();
      for (let i = 0; i < 100; i++) expect((await limiter.admit(s, 'free')).allowed).toBe(true);
      const refused = await limiter.admit(s, 'free');
      expect(refused.allowed).toBe(false);
      expect(refused.refusedBy).toBe('Per-minute limit of 100 requests reached.');
      expect(refused.report).toMatchObject({ limit: 100, remaining: 0, resetAt: clock / 1000 + 60 });
    });

    it('reports the window closest to exhaustion and frees the minute window when it ends', async () => {
      env = await make(now);
      const limiter = new RateLimiter(env.store);
      const s = subject();
      const first = await limiter.admit(s, 'free');
      expect(first.report).toMatchObject({ limit: 100, remaining: 99 });
      for (let i = 0; i < 99; i++) await limiter.admit(s, 'free');
      clock += 60_000;
      const next = await limiter.admit(s, 'free');
      expect(next.allowed).toBe(true);
      expect(next.report).toMatchObject({ limit: 100, remaining: 99 });
    });

    it('enforces the hourly window across minutes, and reports it once it is the tighter one', async () => {
      env = await make(now);
      const limiter = new RateLimiter(env.store);
      const s = subject();
      clock = Date.UTC(2026, 0, 1, 11, 0, 0);
      for (let minute = 0; minute < 10; minute++) {
        for (let i = 0; i < 100; i++) expect((await limiter.admit(s, 'free')).allowed).toBe(true);
        clock += 60_000;
      }
      const refused = await limiter.admit(s, 'free');
      expect(refused.allowed).toBe(false);
      expect(refused.refusedBy).toBe('Hourly limit of 1000 requests reached.');
      expect(refused.report).toMatchObject({ limit: 1000, remaining: 0, resetAt: Date.UTC(2026, 0, 1, 12, 0, 0) / 1000 });
    });

    it('enterprise has no per-minute window but an hourly one', async () => {
      env = await make(now);
      const limiter = new RateLimiter(env.store);
      const admission = await limiter.admit(subject(), 'enterprise');
      expect(admission.report).toMatchObject({ limit: 100_000, remaining: 99_999 });
    });

    it('counts model tokens per minute', async () => {
      env = await make(now);
      const limiter = new RateLimiter(env.store);
      const s = subject();
      expect((await limiter.tokensLeft(s, 'free')).remaining).toBe(20_000);
      await env.store.add([RateLimiter.tokenWindow(s, 'free')], 19_500);
      expect((await limiter.tokensLeft(s, 'free')).remaining).toBe(500);
      await env.store.add([RateLimiter.tokenWindow(s, 'free')], 1_000);
      expect((await limiter.tokensLeft(s, 'free')).remaining).toBe(0);
      clock += 60_000;
      expect((await limiter.tokensLeft(s, 'free')).remaining).toBe(20_000);
    });

    it('never admits more than the limit under concurrent requests', async () => {
      env = await make(now);
      const limiter = new RateLimiter(env.store);
      const s = subject();
      const results = await Promise.all(Array.from({ length: 250 }, () => limiter.admit(s, 'free')));
      expect(results.filter((r) => r.allowed)).toHaveLength(100);
    });
  });
}

limiterSuite('memory', async (now) => {
  const store = new MemoryLimitStore(now);
  return { store, done: () => store.close() };
});

limiterSuite('redis', async (now) => {
  const redis = new Redis(REDIS!);
  const store = new RedisLimitStore(redis, `test-${Math.random().toString(36).slice(2)}:`, now);
  return { store, done: async () => { await redis.quit(); } };
}, !REDIS);
