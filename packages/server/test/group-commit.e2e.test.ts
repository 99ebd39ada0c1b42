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
      promptTokens: 3, completionTokens: 4, processingMs: 1, finishReason: 'stop', createdAt: nowIso(), ...overrides,
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
});
