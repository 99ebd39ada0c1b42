import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.js';

/** The batching rules, over a recording writer (the database side is in test/group-commit.e2e.test.ts). */
function recorder(options: { maxBatch?: number; failBatch?: (items: readonly number[]) => Error | undefined; failOne?: (item: number) => Error | undefined } = {}) {
  const batches: number[][] = [];
  const written: number[] = [];
  let release: (() => void) | undefined;
  let hold = false;
  const commit = new GroupCommit<number>({
    maxBatch: options.maxBatch,
    async writeBatch(items) {
      batches.push([...items]);
      if (hold) await new Promise<void>((r) => { release = r; });
      const error = options.failBatch?.(items);
      if (error) throw error;
      written.push(...items);
    },
    async writeOne(item) {
      batches.push([item]);
      if (hold) await new Promise<void>((r) => { release = r; });
      const error = options.failOne?.(item);
      if (error) throw error;
      written.push(item);
    },
  });
  return { commit, batches, written, holdWrites: (on: boolean) => { hold = on; }, release: () => release?.() };
}

describe('GroupCommit', () => {
  it('writes items submitted in one turn as one batch, and resolves each once written', async () => {
    const r = recorder();
    const done = Promise.all([1, 2, 3, 4].map((n) => r.commit.submit(n)));
    expect(r.batches).toEqual([]); // nothing is written before the turn ends
    await done;
    expect(r.batches).toEqual([[1, 2, 3, 4]]);
    expect(r.written).toEqual([1, 2, 3, 4]);
  });

  it('collects what arrives while a batch is being written into the next batch', async () => {
    const r = recorder();
    r.holdWrites(true);
    const first = r.commit.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.batches).toEqual([[1]]);
    const later = [2, 3, 4].map((n) => r.commit.submit(n));
    r.holdWrites(false);
    r.release();
    await Promise.all([first, ...later]);
    expect(r.batches).toEqual([[1], [2, 3, 4]]);
  });

  it('splits at maxBatch', async () => {
    const r = recorder({ maxBatch: 3 });
    await Promise.all([1, 2, 3, 4, 5, 6, 7].map((n) => r.commit.submit(n)));
    expect(r.batches).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
  });

  it('a refused batch is written again item by item: each item gets its own outcome', async () => {
    const refused = new Error('constraint');
    const r = recorder({ failBatch: (items) => (items.includes(3) ? refused : undefined), failOne: (n) => (n === 3 ? refused : undefined) });
    const outcomes = await Promise.allSettled([1, 2, 3, 4].map((n) => r.commit.submit(n)));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toBe(refused);
    expect(r.written.sort()).toEqual([1, 2, 4]);
  });

  it('when the database is down, every item of the batch gets that error without being retried one by one', async () => {
    const down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const r = recorder({ failBatch: () => down });
    const outcomes = await Promise.allSettled([1, 2, 3].map((n) => r.commit.submit(n)));
    expect(outcomes.every((o) => o.status === 'rejected' && o.reason === down)).toBe(true);
    expect(r.batches).toEqual([[1, 2, 3]]);
  });

  it('drain waits for everything submitted', async () => {
    const r = recorder();
    r.holdWrites(true);
    void r.commit.submit(1);
    let drained = false;
    const drain = r.commit.drain().then(() => { drained = true; });
    await new Promise((resolve) => setImmediate(resolve));
    expect(drained).toBe(false);
    r.holdWrites(false);
    r.release();
    await drain;
    expect(r.written).toEqual([1]);
  });
});
