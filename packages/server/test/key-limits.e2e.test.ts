/**
 * An API key's own limits (docs/api.md "Per-key limits"): requests_per_minute, tokens_per_minute and
 * monthly_tokens, each at most the plan's (else 400), enforced with the plan's in the same atomic
 * LimitStore step: concurrent calls under a key's tokens_per_minute never spend more than it, on one
 * instance and on two server processes sharing PostgreSQL + Redis; a refusal is a 429 with the headers of the key's limit.
 * A call that could never fit the key's figure is a 400 request_too_large. Runs started with a key are charged
 * to it step by step (CONTRACT §12.2): its monthly_tokens end them, and their usage rows name the key.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { spawnServer, type SpawnedServer } from './helpers/spawn-server.js';
import { startTestServer, nextIp, uniqueName, TEST_DATABASE_URL, TEST_REDIS_URL, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { awayFromWindowEnd } from './helpers/limit-windows.js';

const USAGE = { promptTokens: 10, completionTokens: 790 };
const KEY_TPM = 6_000;
const fakeEnv = (fake: FakeVendor) => ({ OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_UPSTREAM_RETRIES: '0' });


async function createKey(base: string, session: string, body: Record<string, unknown>) {
  return request(`${base}/api/v1/api-keys`, { token: session, body: { name: 'limited', ...body } });
}

/** 24 concurrent calls with one key, over /generate and /openai/v1 on the given servers. */
async function burst(bases: string[], key: string) {
  return Promise.all(Array.from({ length: 24 }, async (_, i) => {
    const base = bases[i % bases.length]!;
    const res = i % 2
      ? await request(`${base}/api/v1/generate`, { token: key, body: { prompt: `todo API ${i}`, model: 'gpt-test', max_tokens: 800 } })
      : await request(`${base}/openai/v1/chat/completions`, { token: key, body: { model: 'gpt-test', messages: [{ role: 'user', content: `todo API ${i}` }], max_tokens: 800 } });
    return res;
  }));
}

function expectWithinKeyBudget(responses: Awaited<ReturnType<typeof burst>>) {
  const ok = responses.filter((r) => r.status === 200);
  const spent = ok.reduce((n, r) => n + (r.body.tokens_used ?? r.body.usage.total_tokens), 0);
  expect(spent).toBeLessThanOrEqual(KEY_TPM);
  expect(ok.length).toBeGreaterThanOrEqual(5);
  const refused = responses.filter((r) => r.status !== 200);
  expect(refused.length).toBe(responses.length - ok.length);
  for (const r of refused) {
    expect(r.status).toBe(429);
    expect(r.headers.get('x-ratelimit-limit')).toBe(String(KEY_TPM));
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(r.text).toMatch(/API key's tokens-per-minute limit of 6000/);
  }
}

describe('per-key limits on one instance', () => {
  let fake: FakeVendor;
  let t: TestServer;
  beforeAll(async () => {
    fake = await startOpenAIFake({ record: false, script: { reply: 'word '.repeat(20), usage: USAGE, chunkDelayMs: 2 } });
    t = await startTestServer({ env: fakeEnv(fake) });
  });
  afterAll(async () => { await t?.close(); await fake?.close(); });

  it('each limit must be at most the plan\'s (400 naming every field over); they are listed and can be changed', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const over = await createKey(t.url, token, { requests_per_minute: 101, tokens_per_minute: 20_001 });
    expect(over.status).toBe(400);
    expect(over.body.errors.map((e: any) => e.path).sort()).toEqual(['/requests_per_minute', '/tokens_per_minute']);
    expect((await createKey(t.url, token, { monthly_tokens: 0 })).status).toBe(400);
    const made = await createKey(t.url, token, { requests_per_minute: 100, tokens_per_minute: 20_000, monthly_tokens: 1_000_000 });
    expect(made.status).toBe(201);
    expect(made.body.limits).toEqual({ requests_per_minute: 100, tokens_per_minute: 20_000, monthly_tokens: 1_000_000 });
    const patched = await request(`${t.url}/api/v1/api-keys/${made.body.id}`, { method: 'PATCH', token, body: { tokens_per_minute: 5_000, monthly_tokens: null } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.limits).toEqual({ requests_per_minute: 100, tokens_per_minute: 5_000, monthly_tokens: null });
    expect((await request(`${t.url}/api/v1/api-keys/${made.body.id}`, { method: 'PATCH', token, body: { tokens_per_minute: 20_001 } })).status).toBe(400);
    const list = await request(`${t.url}/api/v1/api-keys`, { token });
    expect(list.body.data[0].limits.tokens_per_minute).toBe(5_000);
    const { token: other } = await registerUser(t.url, { ip: nextIp() });
    expect((await request(`${t.url}/api/v1/api-keys/${made.body.id}`, { method: 'PATCH', token: other, body: { name: 'mine' } })).status).toBe(404);
  });

  it('concurrent calls under a key\'s tokens_per_minute never spend more than it; other keys of the account are not held back', async () => {
    await awayFromWindowEnd();
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const limited = (await createKey(t.url, token, { tokens_per_minute: KEY_TPM })).body.key;
    expectWithinKeyBudget(await burst([t.url], limited));
    const free = (await createKey(t.url, token, {})).body.key;
    expect((await request(`${t.url}/api/v1/generate`, { token: free, body: { prompt: 'todo API', model: 'gpt-test', max_tokens: 800 } })).status).toBe(200);
  });

  it('monthly_tokens: once a month\'s tokens are spent, 429 until the first of next month (UTC)', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const key = (await createKey(t.url, token, { monthly_tokens: 2_000 })).body.key;
    // Each call holds about 1,200 (the prompt's bound and max_tokens) and is charged the 800 reported.
    const call = () => request(`${t.url}/api/v1/generate`, { token: key, body: { prompt: 'todo API', model: 'gpt-test', max_tokens: 800 } });
    expect((await call()).status).toBe(200);
    expect((await call()).status).toBe(200);
    const refused = await call();
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/API key's monthly token limit of 2000/);
    const now = new Date();
    expect(Number(refused.headers.get('x-ratelimit-reset'))).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) / 1000);
  });

  it('a call more than the key\'s whole figure is a 400 request_too_large naming the key\'s limit, not a 429', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const key = (await createKey(t.url, token, { monthly_tokens: 1_000, tokens_per_minute: 5_000 })).body.key;
    const monthly = await request(`${t.url}/api/v1/generate`, { token: key, body: { prompt: 'todo API', model: 'gpt-test', max_tokens: 800 } });
    expect(monthly.status, monthly.text).toBe(400);
    expect(monthly.body.code).toBe('request_too_large');
    expect(monthly.body.detail).toMatch(/more than this API key's 1000 tokens per month, so it can never fit/);
    expect(monthly.headers.get('retry-after')).toBeNull();
    const minute = await request(`${t.url}/openai/v1/chat/completions`, { token: key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5_000 } });
    expect(minute.status).toBe(400);
    expect(minute.body.error).toMatchObject({ type: 'invalid_request_error', code: 'request_too_large' });
    expect(minute.body.error.message).toMatch(/this API key's 1000 tokens per month|this API key's 5000 tokens per minute/);
    // A call that fits still goes through: nothing was held.
    expect((await request(`${t.url}/api/v1/generate`, { token: key, body: { prompt: 'todo API', model: 'gpt-test', max_tokens: 500 } })).status).toBe(200);
  });

  it('runs started with a key are charged to it step by step: its monthly_tokens end them, and their usage rows carry the key', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const made = (await createKey(t.url, token, { monthly_tokens: 2_000 })).body;
    const agent = await request(`${t.url}/api/v1/agents`, { token, body: { name: 'coder', model: 'gpt-test', config: { maxTokens: 300, specialization: 'coder' } } });
    expect(agent.status, agent.text).toBe(201);
    const runs: any[] = [];
    // Each run (one step) holds its prompt's bound + 300 and is charged the 800 the fake reports: two fit in 2,000, the third cannot.
    for (let i = 0; i < 6; i++) {
      const queued = await request(`${t.url}/api/v1/agents/${agent.body.id}/execute`, { token: made.key, body: { task: `CLI for notes ${i}` } });
      expect(queued.status, queued.text).toBe(202);
      const run = await finished(t.url, token, queued.body.id);
      runs.push(run);
      if (run.status !== 'succeeded') break;
    }
    expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'failed']);
    expect(runs[2].error.code).toBe('rate_limited');
    expect(runs[2].error.message).toMatch(/API key's monthly token limit of 2000 reached \(400 left this month/);
    const spent = runs.reduce((n, r) => n + r.tokens_used, 0);
    expect(spent).toBe(1_600);
    const perKey = await request(`${t.url}/api/v1/usage?group_by=api_key`, { token });
    expect(perKey.body.data).toEqual([expect.objectContaining({ api_key_id: made.id, requests: 2, failed_requests: 0, total_tokens: spent })]);
    // The account's session is not held back by the key's figure.
    const bySession = await request(`${t.url}/api/v1/agents/${agent.body.id}/execute`, { token, body: { task: 'CLI for notes' } });
    expect((await finished(t.url, token, bySession.body.id)).status).toBe('succeeded');
  });

  it('a run step that can never fit the key\'s figure ends the run failed with request_too_large', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const key = (await createKey(t.url, token, { tokens_per_minute: 1_000 })).body.key;
    const agent = await request(`${t.url}/api/v1/agents`, { token, body: { name: 'big', model: 'gpt-test', config: { maxTokens: 2_000, specialization: 'coder' } } });
    const queued = await request(`${t.url}/api/v1/agents/${agent.body.id}/execute`, { token: key, body: { task: 'CLI for notes' } });
    const run = await finished(t.url, token, queued.body.id);
    expect(run).toMatchObject({ status: 'failed', tokens_used: 0, error: { code: 'request_too_large' } });
    expect(run.error.message).toMatch(/this API key's 1000 tokens per minute/);
  });

  it('requests_per_minute counts every request of the key, with its headers on the refusal', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    await awayFromWindowEnd();
    const key = (await createKey(t.url, token, { requests_per_minute: 3 })).body.key;
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push(await request(`${t.url}/api/v1/models`, { token: key }));
    expect(statuses.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(statuses[3]!.headers.get('x-ratelimit-limit')).toBe('3');
    expect(statuses[3]!.body.detail).toMatch(/API key's per-minute limit of 3 requests/);
    // The session of the same account is not held back by its key's limit.
    expect((await request(`${t.url}/api/v1/models`, { token })).status).toBe(200);
  });
});

/** Polls a run until it has finished (the account's 100 requests a minute are plenty). */
async function finished(base: string, token: string, id: string): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const res = await request(`${base}/api/v1/runs/${id}`, { token });
    if (['succeeded', 'failed', 'cancelled'].includes(res.body.status)) return res.body;
    await new Promise((r) => setTimeout(r, i < 10 ? 30 : 150));
  }
  throw new Error(`run ${id} did not finish`);
}

const shared = Boolean(TEST_DATABASE_URL && TEST_REDIS_URL);
if (!shared) console.log('skipping the two-process per-key limit test: it needs TEST_DATABASE_URL and TEST_REDIS_URL');

describe.skipIf(!shared)('per-key tokens_per_minute across two server processes on PostgreSQL + Redis', () => {
  const schema = uniqueName('keys');
  let fake: FakeVendor;
  let a: SpawnedServer;
  let b: SpawnedServer;
  beforeAll(async () => {
    fake = await startOpenAIFake({ record: false, script: { reply: 'word '.repeat(20), usage: USAGE, chunkDelayMs: 2 } });
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`CREATE SCHEMA "${schema}"`);
    await client.end();
    const env = { DATABASE_URL: TEST_DATABASE_URL!, CODELOOM_DATABASE_SCHEMA: schema, REDIS_URL: TEST_REDIS_URL!, ...fakeEnv(fake) };
    [a, b] = await Promise.all([spawnServer(env), spawnServer(env)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await fake?.close();
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try { await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`); } finally { await client.end(); }
  });

  it('24 concurrent calls with one key, spread over both processes, spend at most the key\'s figure', async () => {
    await awayFromWindowEnd();
    const { token } = await registerUser(a.url, { ip: nextIp() });
    const key = (await createKey(a.url, token, { tokens_per_minute: KEY_TPM })).body.key;
    expectWithinKeyBudget(await burst([a.url, b.url], key));
  });
});
