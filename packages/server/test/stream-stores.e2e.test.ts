/**
 * The streaming channel on shared storage (PostgreSQL + Redis): results saved in the
 * PostgreSQL history, and rate limits that hold across instances, so a budget spent over
 * HTTP on one instance refuses a generate on a socket of another. Needs TEST_DATABASE_URL
 * and TEST_REDIS_URL; skipped otherwise.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, uniqueName, TEST_DATABASE_URL, TEST_REDIS_URL, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { connect as connectWs, generateOverBudget } from './helpers/ws-client.js';

/** Frames are awaited for 15 s; `result` does not check for frames after the end. */
const connect = (base: string, token: string) => connectWs(base, token, { timeoutMs: 15_000, checkAfterEnd: false });

const enabled = Boolean(TEST_DATABASE_URL && TEST_REDIS_URL);
if (!enabled) console.log('skipping streaming tests on PostgreSQL + Redis: they need TEST_DATABASE_URL and TEST_REDIS_URL');

describe.skipIf(!enabled)('WebSocket /api/v1/stream on PostgreSQL + Redis, two instances', () => {
  const schema = uniqueName('ws');
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    const shared = { dialect: 'postgres' as const, redis: true, pgSchema: schema, redisPrefix: `${uniqueName('ws')}:` };
    a = await startTestServer(shared);
    b = await startTestServer(shared);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try { await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`); } finally { await client.end(); }
  });

  it('twenty generations at once on one socket all complete, each saved in the shared history', async () => {
    const u = await registerUser(a.url, { ip: nextIp() });
    const c = await connect(a.url, u.token);
    const ids = Array.from({ length: 20 }, (_, i) => `pg${i}`);
    for (const [i, id] of ids.entries()) c.send({ type: 'generate', id, prompt: `REST API for gadgets number ${i}`, language: i % 2 ? 'python' : 'typescript', model: 'sandbox', max_tokens: 300 });
    const results = await Promise.all(ids.map((id) => c.result(id)));
    for (const [i, { end, tokens }] of results.entries()) {
      expect(end.event, `${ids[i]}: ${JSON.stringify(end.data).slice(0, 200)}`).toBe('complete');
      expect(tokens.join('')).toBe(end.data.output);
    }
    // Read back through the other instance: the results live in the shared database.
    for (const { end } of results) {
      const saved = await request(`${b.url}/api/v1/generations/${end.data.id}`, { token: u.token });
      expect(saved.status).toBe(200);
      expect(saved.body).toEqual(end.data);
    }
    c.ws.close();
  });

  it('a budget spent over HTTP on one instance refuses a generate on a socket of the other (429 frame)', async () => {
    const u = await registerUser(a.url, { ip: nextIp() });
    const c = await connect(b.url, u.token);
    const { end, tokens } = await generateOverBudget(c, a.url, u.token);
    expect(tokens).toEqual([]);
    expect(end).toMatchObject({ event: 'error', id: 'over', data: { status: 429, code: 'rate_limited', retry_after: expect.any(Number), rate_limit: { limit: 100, remaining: 0, reset: expect.any(Number) } } });
    c.ws.close();
  });
});
