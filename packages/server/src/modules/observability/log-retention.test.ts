import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { RequestLogsRepo } from '../../storage/repos/request-logs-repo.js';
import { LogRetention } from './log-retention.js';

/** An in-memory repo: `rows` timestamps; each batch takes a little while, so two passes overlap. */
function fakeRepo(rows: number[]) {
  const calls: Array<{ before: number; batch: number }> = [];
  const repo = {
    async deleteBefore(before: number, batch: number) {
      calls.push({ before, batch });
      await new Promise((r) => setTimeout(r, 5));
      let n = 0;
      for (let i = rows.length - 1; i >= 0 && n < batch; i--) if (rows[i]! < before) { rows.splice(i, 1); n++; }
      return n;
    },
  } as unknown as RequestLogsRepo;
  return { repo, calls };
}

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-25T12:00:00Z');

describe('LogRetention', () => {
  it('deletes everything older than the retention in batches of the given size, nothing newer', async () => {
    const rows = [...Array.from({ length: 25 }, (_, i) => NOW - 31 * DAY - i), ...Array.from({ length: 5 }, (_, i) => NOW - 29 * DAY - i)];
    const { repo, calls } = fakeRepo(rows);
    const retention = new LogRetention(repo, { days: 30, batch: 10, onError: (e) => { throw e; } });
    expect(await retention.runOnce(NOW)).toBe(25);
    expect(calls.map((c) => c.batch)).toEqual([10, 10, 10]);
    expect(calls.every((c) => c.before === NOW - 30 * DAY)).toBe(true);
    expect(rows).toHaveLength(5);
    // A pass already running is shared, not doubled.
    const [a, b] = await Promise.all([retention.runOnce(NOW), retention.runOnce(NOW)]);
    expect(a + b).toBe(0);
  });

  const url = process.env.TEST_REDIS_URL;
  describe.skipIf(!url)('with Redis', () => {
    const redis = url ? new Redis(url) : undefined;
    afterAll(async () => { await redis?.quit(); });

    it('one instance at a time: a second pass while the lock is held deletes nothing; the lock is released after', async () => {
      const key = `test:log-retention:${Math.random().toString(36).slice(2)}`;
      const rows = Array.from({ length: 40 }, (_, i) => NOW - 40 * DAY - i);
      const one = fakeRepo(rows);
      const two = fakeRepo(rows);
      const a = new LogRetention(one.repo, { days: 30, batch: 10, redis, lockKey: key, onError: (e) => { throw e; } });
      const b = new LogRetention(two.repo, { days: 30, batch: 10, redis, lockKey: key, onError: (e) => { throw e; } });
      const [da, db] = await Promise.all([a.runOnce(NOW), new Promise<number>((r) => setTimeout(() => r(b.runOnce(NOW)), 2))]);
      expect(da).toBe(40);
      expect(db).toBe(0);
      expect(two.calls).toHaveLength(0);
      expect(await redis!.exists(key)).toBe(0);
      // Free again: the next pass (on either instance) runs.
      expect(await b.runOnce(NOW)).toBe(0);
      expect(two.calls).toHaveLength(1);
    });
  });
});
