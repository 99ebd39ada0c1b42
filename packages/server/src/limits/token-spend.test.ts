import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { AppError } from '../errors.js';
import type { LimitStore } from './limit-store.js';
import { MemoryLimitStore } from './memory-limit-store.js';
import { RedisLimitStore } from './redis-limit-store.js';
import { TokenSpend, type SpendSubject, type TokenReservation } from './token-spend.js';

const REDIS = process.env.TEST_REDIS_URL;
if (!REDIS) console.log('skipping Redis token-spend tests: TEST_REDIS_URL is not set');

/** Reserve and settle behave the same on every LimitStore; a fake clock crosses windows without waiting. */
function spendSuite(name: string, make: (now: () => number) => Promise<{ store: LimitStore; done(): Promise<void> }>, skip = false) {
  describe.skipIf(skip)(`TokenSpend on ${name}`, () => {
    let clock = Date.UTC(2026, 0, 1, 10, 0, 0);
    const now = () => clock;
    let env: { store: LimitStore; done(): Promise<void> } | undefined;
    afterEach(async () => { await env?.done(); });
    const free = (): SpendSubject => ({ user: { id: `usr_${Math.random().toString(36).slice(2)}` }, org: { plan: 'free' }, environment: 'production' });
    const setup = async () => { env = await make(now); return new TokenSpend(env.store, (e) => { throw e; }); };
    const refusedBy = async (p: Promise<unknown>) => {
      const error = await p.then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      return error as AppError;
    };

    it('holds the reservation, then settles to the real usage and refunds the rest', async () => {
      const spend = await setup();
      const s = free();
      const r = await spend.reserve(s, 5_000);
      expect(r.tokens).toBe(5_000);
      expect((await spend.left(s))!.remaining).toBe(15_000);
      await r.settle(1_200);
      expect((await spend.left(s))!.remaining).toBe(18_800);
      await r.settle(0);
      await r.release();
      expect((await spend.left(s))!.remaining).toBe(18_800);
    });

    it('refuses all or nothing with 429 rate_limited, Retry-After and the window in headers', async () => {
      const spend = await setup();
      const s = free();
      await spend.reserve(s, 19_000);
      const error = await refusedBy(spend.reserve(s, 1_001));
      expect(error.code).toBe('rate_limited');
      expect(error.message).toContain('Tokens-per-minute limit of 20000 reached (1000 left this minute');
      expect(error.extra.headers).toMatchObject({ 'x-ratelimit-limit': '20000', 'x-ratelimit-remaining': '1000', 'x-ratelimit-reset': String(clock / 1000 + 60) });
      expect(Number(error.extra.headers!['retry-after'])).toBeGreaterThan(0);
      // The refused call held nothing: exactly what is left still fits.
      expect((await spend.reserve(s, 1_000)).tokens).toBe(1_000);
      expect((await spend.left(s))!.remaining).toBe(0);
    });

    it('a call that could never fit is a 400 request_too_large, not a 429, and holds nothing', async () => {
      const spend = await setup();
      const s = free();
      const error = await refusedBy(spend.reserve(s, 20_001, { prompt: 16_001, output: 4_000 }));
      expect(error.code).toBe('request_too_large');
      expect(error.status).toBe(400);
      expect(error.message).toBe("This call may use up to 20001 tokens (its prompt counts as up to 16001, its output cap is 4000): more than the plan's 20000 tokens per minute, so it can never fit; lower max_tokens or shorten the prompt.");
      expect(error.extra.headers?.['retry-after']).toBeUndefined();
      expect((await spend.left(s))!.remaining).toBe(20_000);
      // Exactly the whole figure still fits.
      expect((await spend.reserve(s, 20_000)).tokens).toBe(20_000);
    });

    it('never admits more than the limit under many concurrent reservations', async () => {
      const spend = await setup();
      const s = free();
      const results = await Promise.allSettled(Array.from({ length: 200 }, (_, i) => spend.reserve(s, 700 + (i % 7) * 100)));
      const held = results.filter((r): r is PromiseFulfilledResult<TokenReservation> => r.status === 'fulfilled').map((r) => r.value);
      const admitted = held.reduce((n, r) => n + r.tokens, 0);
      expect(admitted).toBeLessThanOrEqual(20_000);
      expect(admitted).toBeGreaterThan(20_000 - 1_300);
      expect((await spend.left(s))!.remaining).toBe(20_000 - admitted);
      expect(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason.code === 'rate_limited')).toBe(true);
    });

    it('interleaved reserves and settles: what is held never passes the limit, and refunds are reused', async () => {
      const spend = await setup();
      const s = free();
      let inFlight = 0;
      let peak = 0;
      let admittedCalls = 0;
      const worker = async () => {
        for (let k = 0; k < 15; k++) {
          try {
            const r = await spend.reserve(s, 3_000);
            inFlight += r.tokens;
            peak = Math.max(peak, inFlight);
            admittedCalls++;
            await new Promise((res) => setImmediate(res));
            inFlight -= r.tokens;
            await r.settle(100);
          } catch (e) {
            expect((e as AppError).code).toBe('rate_limited');
          }
        }
      };
      await Promise.all(Array.from({ length: 20 }, worker));
      expect(peak).toBeLessThanOrEqual(20_000);
      // Settled at 100 each, refunds made room for far more calls than 20,000 / 3,000 = 6.
      expect(admittedCalls).toBeGreaterThan(6);
      expect((await spend.left(s))!.remaining).toBe(20_000 - 100 * admittedCalls);
    });

    it('use above the reservation is charged in full: up to the limit in this window, the rest carried into the next', async () => {
      const spend = await setup();
      const s = free();
      clock = Date.UTC(2026, 0, 1, 10, 1, 10);
      const a = await spend.reserve(s, 10_000);
      const b = await spend.reserve(s, 8_000);
      await a.settle(15_000);
      // 18,000 held + 5,000 over: this minute is full (never past its figure), and 3,000 wait in the next one.
      expect((await spend.left(s))!.remaining).toBe(0);
      await b.settle(8_000);
      expect((await spend.left(s))!.remaining).toBe(0);
      expect((await refusedBy(spend.reserve(s, 1))).code).toBe('rate_limited');
      clock += 60_000;
      expect((await spend.left(s))!.remaining).toBe(17_000);
      expect((await refusedBy(spend.reserve(s, 17_001))).code).toBe('rate_limited');
      expect((await spend.reserve(s, 17_000)).tokens).toBe(17_000);
    });

    it('an excess settled after its window ended is charged to the window current then', async () => {
      const spend = await setup();
      const s = free();
      clock = Date.UTC(2026, 0, 1, 10, 2, 50);
      const r = await spend.reserve(s, 1_000);
      clock += 70_000;
      await r.settle(4_000);
      expect((await spend.left(s))!.remaining).toBe(17_000);
    });

    it('the sum of what every call is charged equals the sum of their use, under concurrent settles over and under', async () => {
      const spend = await setup();
      const s = free();
      clock = Date.UTC(2026, 0, 1, 10, 4, 0);
      const held = await Promise.all(Array.from({ length: 10 }, () => spend.reserve(s, 1_500)));
      const used = held.map((_, i) => (i % 2 ? 400 : 2_600));
      await Promise.all(held.map((r, i) => r.settle(used[i]!)));
      expect((await spend.left(s))!.remaining).toBe(20_000 - used.reduce((a, b) => a + b, 0));
    });

    it('settles into the window it was reserved in, not the next one', async () => {
      const spend = await setup();
      const s = free();
      clock = Date.UTC(2026, 0, 1, 10, 5, 59);
      const r = await spend.reserve(s, 12_000);
      clock += 2_000;
      const next = await spend.reserve(s, 4_000);
      await r.settle(2_000);
      expect((await spend.left(s))!.remaining).toBe(16_000);
      await next.settle(4_000);
      expect((await spend.left(s))!.remaining).toBe(16_000);
    });

    it('an aborted call settled with what it used is charged that much', async () => {
      const spend = await setup();
      const s = free();
      const r = await spend.reserve(s, 4_000);
      await r.settle(250);
      expect((await spend.left(s))!.remaining).toBe(19_750);
    });

    it('the sandbox environment has no quota', async () => {
      const spend = await setup();
      const sandbox: SpendSubject = { ...free(), environment: 'sandbox' };
      for (let i = 0; i < 5; i++) expect((await spend.reserve(sandbox, 1_000_000)).tokens).toBe(0);
      expect(await spend.left(sandbox)).toBeUndefined();
    });

    it('adjust: refunds stop at zero and only touch a current window; additions fill to the limit and carry the rest', async () => {
      env = await make(now);
      const w = [{ key: `adj:${Math.random()}`, limit: 10, windowSec: 60 }];
      clock = Date.UTC(2026, 0, 1, 11, 0, 0);
      const { atMs } = await env.store.consume(w, 4);
      expect((await env.store.adjust(w, -9, atMs))[0]!.remaining).toBe(10);
      expect((await env.store.adjust(w, 25, atMs))[0]!.remaining).toBe(0);
      clock += 60_000;
      // 15 of the 25 went on into this window: over its figure, so nothing more is admitted in it.
      expect((await env.store.peek(w))[0]!.remaining).toBe(0);
      expect((await env.store.consume(w, 1)).allowed).toBe(false);
      clock += 60_000;
      await env.store.consume(w, 3);
      await env.store.adjust(w, -5, atMs);
      expect((await env.store.peek(w))[0]!.remaining).toBe(7);
    });

    it('settle takes one amount per window (tokens in one, another meter in another), in one step', async () => {
      env = await make(now);
      clock = Date.UTC(2026, 0, 1, 12, 0, 0);
      const w = [{ key: `m1:${Math.random()}`, limit: 100, windowSec: 60 }, { key: `m2:${Math.random()}`, limit: 1_000_000, windowSec: 60 }];
      const held = await env.store.consume(w, [60, 500_000]);
      expect(held.allowed).toBe(true);
      expect((await env.store.consume(w, [50, 1])).allowed).toBe(false);
      expect((await env.store.consume(w, [1, 500_001])).allowed).toBe(false);
      const states = await env.store.settle(w, [60, 500_000], [20, 700_000], held.atMs);
      expect(states.map((s) => s.remaining)).toEqual([80, 300_000]);
    });
  });
}

spendSuite('memory', async (now) => {
  const store = new MemoryLimitStore(now);
  return { store, done: () => store.close() };
});

spendSuite('redis', async (now) => {
  const redis = new Redis(REDIS!);
  const store = new RedisLimitStore(redis, `test-${Math.random().toString(36).slice(2)}:`, now);
  return { store, done: async () => { await redis.quit(); } };
}, !REDIS);
