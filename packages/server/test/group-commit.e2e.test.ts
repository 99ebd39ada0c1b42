import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GenerationRecord } from '../src/storage/repos/generations-repo.js';
import { newId, nowIso } from '../src/storage/ids.js';
import { nextIp, startTestServer, TEST_DATABASE_URL, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';

/**
 * Generation inserts are group-committed (storage/group-commit.ts): concurrent ones share one statement and
 * one commit. What must still hold: every answered generation is stored, exactly once, before its answer;
 * a batch a constraint refuses fails only the rows that are wrong, each request getting its own outcome.
 */
const dialects = [{ name: 'SQLite', dialect: 'sqlite' as const }, ...(TEST_DATABASE_URL ? [{ name: 'PostgreSQL', dialect: 'postgres' as const }] : [])];
if (!TEST_DATABASE_URL) console.log('skipping group commit on PostgreSQL: TEST_DATABASE_URL is not set');

describe.each(dialects)('group commit of generations on $name', ({ dialect }) => {
  let t: TestServer;
  let user: Awaited<ReturnType<typeof registerUser>>;

  beforeAll(async () => {
    t = await startTestServer({ dialect });
    user = await registerUser(t.url, { ip: nextIp() });
    await t.server.ctx.store.accounts.setPlanByEmail(user.email.toLowerCase(), 'enterprise');
  });
  afterAll(async () => { await t?.close(); });

  it('40 concurrent generations: each is readable as soon as it is answered, and history holds each exactly once', async () => {
    const answers = await Promise.all(Array.from({ length: 40 }, async (_, i) => {
      const res = await request(`${t.url}/api/v1/generate`, { token: user.token, body: { prompt: `a cli that prints ${i}`, language: 'python', model: 'sandbox' } });
      expect(res.status).toBe(200);
      // Read back at once, while the other generations are still being answered and written.
      const stored = await request(`${t.url}/api/v1/generations/${res.body.id}`, { token: user.token });
      expect(stored.status).toBe(200);
      expect(stored.body).toEqual(res.body);
      return res.body as { id: string; prompt: string };
    }));
    const list = await request(`${t.url}/api/v1/generations?limit=100`, { token: user.token });
    expect(list.status).toBe(200);
    expect(list.body.pagination.total).toBe(40);
    const ids = list.body.data.map((g: { id: string }) => g.id);
    expect(new Set(ids).size).toBe(40);
    expect(new Set(ids)).toEqual(new Set(answers.map((a) => a.id)));
  });

  it('a batch with refused rows: the good rows are stored, each refused row fails alone, nothing is stored twice', async () => {
    const store = t.server.ctx.store;
    const record = (overrides: Partial<GenerationRecord> = {}): GenerationRecord => ({
      id: newId('gen'), userId: user.user.id, environment: 'production', projectId: null, model: 'sandbox', language: 'python',
      prompt: 'batch', request: { context: {} }, output: 'print(1)\n', files: [{ path: 'main.py', content: 'print(1)\n' }], code: 'print(1)\n',
      promptTokens: 3, completionTokens: 4, processingMs: 1, finishReason: 'stop', createdAt: nowIso(), costMicros: 7, ...overrides,
    });
    const good = Array.from({ length: 8 }, () => record());
    const unknownUser = record({ userId: 'usr_nobody' }); // foreign key refuses it
    const duplicate = record({ id: good[3]!.id, prompt: 'the same id again' }); // primary key refuses one of the two
    const all = [...good.slice(0, 4), unknownUser, ...good.slice(4), duplicate];
    // Submitted in one turn, so they go out as one batch.
    const outcomes = await Promise.allSettled(all.map((r) => store.generations.insert(r)));
    expect(outcomes.map((o) => o.status)).toEqual([...Array(4).fill('fulfilled'), 'rejected', ...Array(4).fill('fulfilled'), 'rejected']);
    for (const g of good) {
      const row = await store.generations.get(user.user.id, 'production', g.id);
      expect(row).toEqual(g);
    }
    expect(await store.generations.get('usr_nobody', 'production', unknownUser.id)).toBeUndefined();
    const batchRows = await store.handle.db.selectFrom('generations').select('id').where('prompt', 'in', ['batch', 'the same id again']).execute();
    expect(batchRows.map((r) => r.id).sort()).toEqual(good.map((g) => g.id).sort());
  });

  it('generation rows and usage rows submitted in one turn are written together; a refused usage row fails alone', async () => {
    const store = t.server.ctx.store;
    const model = `batch-model-${dialect}`;
    const usage = (userId: string, day: string, promptTokens: number, failed = false) => ({
      userId, environment: 'production' as const, apiKeyId: null, model, day, failed, promptTokens, completionTokens: 2, costMicros: promptTokens * 3,
    });
    const generation = (): GenerationRecord => ({
      id: newId('gen'), userId: user.user.id, environment: 'production', projectId: null, model, language: 'python',
      prompt: 'mixed batch', request: { context: {} }, output: 'x', files: [], code: 'x',
      promptTokens: 1, completionTokens: 2, processingMs: 1, finishReason: 'stop', createdAt: nowIso(), costMicros: 0,
    });
    const usageOf = async (userId: string, day: string) => store.usage.summarize(userId, 'production', day, day, 'model');

    // One turn, every row good: one batch of both kinds (one transaction on SQLite, one statement on PostgreSQL).
    const first = Array.from({ length: 3 }, generation);
    await Promise.all([...first.map((g) => store.generations.insert(g)), ...[1, 2, 3].map((n) => store.usage.record(usage(user.user.id, '2031-01-01', n)))]);
    for (const g of first) expect(await store.generations.get(user.user.id, 'production', g.id)).toEqual(g);
    expect(await usageOf(user.user.id, '2031-01-01')).toEqual([{ key: model, requests: 3, failedRequests: 0, promptTokens: 6, completionTokens: 6, costMicros: 18 }]);

    // One turn with a usage row of an unknown account: the batch is written again row by row, only that row fails.
    const second = Array.from({ length: 5 }, generation);
    const outcomes = await Promise.allSettled([
      ...second.map((g) => store.generations.insert(g)),
      ...[1, 2, 3, 4, 5].map((n) => store.usage.record(usage(user.user.id, '2031-01-02', n))),
      store.usage.record(usage('usr_nobody', '2031-01-02', 100)),
      store.usage.record(usage(user.user.id, '2031-01-02', 10, true)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([...Array(10).fill('fulfilled'), 'rejected', 'fulfilled']);
    for (const g of second) expect(await store.generations.get(user.user.id, 'production', g.id)).toEqual(g);
    expect(await usageOf(user.user.id, '2031-01-02')).toEqual([{ key: model, requests: 6, failedRequests: 1, promptTokens: 25, completionTokens: 12, costMicros: 75 }]);
    expect(await usageOf('usr_nobody', '2031-01-02')).toEqual([]);
  });
});
