/**
 * An API key's own token windows (token-spend.ts keyTokenWindows): its tokens_per_minute and its
 * monthly_tokens are reserved together with the plan's, all or nothing, on memory and on Redis; the
 * monthly window is the calendar month (UTC), so it resets on the first of the month, not on an
 * epoch-aligned 32-day boundary. A fake clock crosses the month without waiting.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { AppError } from '../errors.js';
import type { LimitStore } from './limit-store.js';
import { MemoryLimitStore } from './memory-limit-store.js';
import { RedisLimitStore } from './redis-limit-store.js';
import { TokenSpend, type SpendSubject } from './token-spend.js';

const REDIS = process.env.TEST_REDIS_URL;

function keySuite(name: string, make: (now: () => number) => { store: LimitStore; done(): Promise<void> }, skip = false) {
  describe.skipIf(skip)(`key token windows on ${name}`, () => {
    let clock = Date.UTC(2026, 0, 31, 23, 59, 0);
    const now = () => clock;
    let env: { store: LimitStore; done(): Promise<void> } | undefined;
    afterEach(async () => { await env?.done(); });
    const key = (limits: SpendSubject['keyLimits']): SpendSubject => ({
      user: { id: `usr_${Math.random().toString(36).slice(2)}` }, org: { plan: 'free' }, environment: 'production',
      apiKeyId: `key_${Math.random().toString(36).slice(2)}`, keyLimits: limits,
    });

    it('monthly_tokens holds until the first of the next month (UTC), then starts again', async () => {
      clock = Date.UTC(2026, 0, 31, 23, 59, 0);
      env = make(now);
      const spend = new TokenSpend(env.store, (e) => { throw e; });
      const s = key({ monthly_tokens: 1_000 });
      await (await spend.reserve(s, 600)).settle(600);
      const refused = await spend.reserve(s, 500).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(AppError);
      expect((refused as AppError).message).toMatch(/API key's monthly token limit of 1000 reached \(400 left this month/);
      expect((refused as AppError).extra.headers!['x-ratelimit-reset']).toBe(String(Date.UTC(2026, 1, 1) / 1000));
      clock = Date.UTC(2026, 1, 1, 0, 0, 1);
      await expect(spend.reserve(s, 900)).resolves.toMatchObject({ tokens: 900 });
    });

    it('monthly_tokens: a settle above the reservation fills the month and carries the rest into the next; more than the month is request_too_large', async () => {
      clock = Date.UTC(2026, 0, 31, 23, 59, 0);
      env = make(now);
      const spend = new TokenSpend(env.store, (e) => { throw e; });
      const s = key({ monthly_tokens: 1_000 });
      const tooLarge = await spend.reserve(s, 1_001).catch((e: unknown) => e);
      expect((tooLarge as AppError).code).toBe('request_too_large');
      expect((tooLarge as AppError).message).toMatch(/more than this API key's 1000 tokens per month/);
      const r = await spend.reserve(s, 700);
      await r.settle(1_300);
      const refused = await spend.reserve(s, 1).catch((e: unknown) => e);
      expect((refused as AppError).code).toBe('rate_limited');
      // February starts 300 in: what January could not hold.
      clock = Date.UTC(2026, 1, 1, 0, 0, 1);
      await expect(spend.reserve(s, 701)).rejects.toMatchObject({ code: 'rate_limited' });
      await expect(spend.reserve(s, 700)).resolves.toMatchObject({ tokens: 700 });
    });

    it('the key\'s tokens_per_minute and the plan\'s are reserved together, all or nothing', async () => {
      clock = Date.UTC(2026, 3, 10, 8, 0, 0);
      env = make(now);
      const spend = new TokenSpend(env.store, (e) => { throw e; });
      const s = key({ tokens_per_minute: 1_500 });
      const held = await Promise.allSettled(Array.from({ length: 10 }, () => spend.reserve(s, 400)));
      expect(held.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
      // The refused ones held nothing in the plan's window either.
      expect((await spend.left(s))!.remaining).toBe(20_000 - 1_200);
      // Another key of the same account is not held back by this one's figure.
      const other = { ...s, apiKeyId: 'key_other', keyLimits: { tokens_per_minute: 1_500 } };
      await expect(spend.reserve(other, 1_500)).resolves.toMatchObject({ tokens: 1_500 });
    });
  });
}

keySuite('memory', (now) => ({ store: new MemoryLimitStore(now), done: async () => {} }));
keySuite('Redis', (now) => {
  const redis = new Redis(REDIS ?? 'redis://127.0.0.1:6379', { lazyConnect: true });
  const store = new RedisLimitStore(redis, `test:keywin:${Math.random().toString(36).slice(2)}:`, now);
  return { store, done: async () => { await store.close(); redis.disconnect(); } };
}, !REDIS);
