/**
 * The tokens-per-minute budget is reserved before a model call and settled after it
 * (docs/api.md "Token budget"): however many calls run at once, on however many instances,
 * the tokens admitted in a minute never pass the plan's figure (free: 20,000), and the
 * refused calls get 429 `rate_limited` with Retry-After (an error frame with retry_after on
 * the channel). The OpenAI fake reports 2,000 tokens a call, within what each call reserves
 * (prompt estimate + max_tokens 1,900), so about nine calls fit in a minute.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import type { SpawnedServer } from './helpers/spawn-server.js';
import { clusterEnabled, startCluster, type Cluster } from './helpers/cluster.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { readSse } from './helpers/sse.js';
import { connect } from './helpers/ws-client.js';
import { awayFromWindowEnd } from './helpers/limit-windows.js';

const USAGE = { promptTokens: 100, completionTokens: 1_900 };
const FREE_TPM = 20_000;
const fakeEnv = (fake: FakeVendor) => ({ OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'gpt-test' });

type Outcome = { status: number; tokens: number; retryAfter: number; code?: string };

/** 40 concurrent POST /generate spread over `bases`, every fourth one as SSE; what each got. */
async function burst(bases: string[], token: string): Promise<Outcome[]> {
  return Promise.all(Array.from({ length: 40 }, async (_, i): Promise<Outcome> => {
    const stream = i % 4 === 0;
    const res = await fetch(`${bases[i % bases.length]}/api/v1/generate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: `todo API number ${i}`, model: 'gpt-test', max_tokens: 1_900, stream }),
    });
    const retryAfter = Number(res.headers.get('retry-after') ?? 0);
    if (res.status !== 200) return { status: res.status, tokens: 0, retryAfter, code: (await res.json()).code };
    if (!stream) return { status: 200, tokens: (await res.json()).tokens_used, retryAfter };
    const end = (await readSse(res)).at(-1)!;
    expect(end.event, JSON.stringify(end.frame).slice(0, 300)).toBe('complete');
    return { status: 200, tokens: end.frame.data.tokens_used, retryAfter };
  }));
}

function expectWithinBudget(outcomes: Outcome[]) {
  const ok = outcomes.filter((o) => o.status === 200);
  const refused = outcomes.filter((o) => o.status !== 200);
  expect(ok.every((o) => o.tokens === USAGE.promptTokens + USAGE.completionTokens)).toBe(true);
  const admitted = ok.reduce((n, o) => n + o.tokens, 0);
  expect(admitted).toBeLessThanOrEqual(FREE_TPM);
  expect(ok.length).toBeGreaterThanOrEqual(5);
  expect(refused.length).toBe(40 - ok.length);
  for (const r of refused) {
    expect(r).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(r.retryAfter).toBeGreaterThan(0);
    expect(r.retryAfter).toBeLessThanOrEqual(60);
  }
}

describe('token budget on one instance (SQLite, memory limit store)', () => {
  let fake: FakeVendor;
  let t: TestServer;

  beforeAll(async () => {
    fake = await startOpenAIFake({ record: false, script: { reply: 'word '.repeat(40), usage: USAGE, chunkDelayMs: 2 } });
    t = await startTestServer({ env: fakeEnv(fake) });
  });
  afterAll(async () => { await t?.close(); await fake?.close(); });

  it('40 concurrent generations (JSON and SSE) admit at most 20,000 tokens in the minute; the rest get 429 with Retry-After', async () => {
    await awayFromWindowEnd();
    const { token } = await registerUser(t.url, { ip: nextIp() });
    expectWithinBudget(await burst([t.url], token));
  });

  it('generations on one socket share the budget: refused ones end with a rate_limited error frame carrying retry_after', async () => {
    await awayFromWindowEnd();
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const c = await connect(t.url, token);
    const ids = Array.from({ length: 14 }, (_, i) => `w${i}`);
    for (const id of ids) c.send({ type: 'generate', id, prompt: 'todo API', model: 'gpt-test', max_tokens: 1_900 });
    const ends = (await Promise.all(ids.map((id) => c.result(id)))).map((r) => r.end);
    const done = ends.filter((e) => e.event === 'complete');
    expect(done.reduce((n, e) => n + e.data.tokens_used, 0)).toBeLessThanOrEqual(FREE_TPM);
    expect(done.length).toBeGreaterThanOrEqual(5);
    const refused = ends.filter((e) => e.event === 'error');
    expect(refused.length).toBe(ids.length - done.length);
    for (const e of refused) {
      expect(e.data).toMatchObject({ status: 429, code: 'rate_limited', rate_limit: { limit: FREE_TPM } });
      expect(e.data.retry_after).toBeGreaterThan(0);
    }
    c.ws.close();
  });

  it('a call the client abandons gives back what it did not use', async () => {
    fake.script({ chunkDelayMs: 40 });
    try {
      await awayFromWindowEnd();
      const { token } = await registerUser(t.url, { ip: nextIp() });
      const big = { prompt: 'long one', model: 'gpt-test', max_tokens: 15_000 };
      const controller = new AbortController();
      const res = await fetch(`${t.url}/api/v1/generate`, { method: 'POST', signal: controller.signal, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...big, stream: true }) });
      expect(res.status).toBe(200);
      await res.body!.getReader().read();
      // While it runs, its reservation holds 15,000 of the 20,000.
      expect((await request(`${t.url}/api/v1/generate`, { token, body: big })).status).toBe(429);
      controller.abort();
      let status = 0;
      for (let i = 0; i < 40 && status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 50));
        fake.script({ chunkDelayMs: 0 });
        status = (await request(`${t.url}/api/v1/generate`, { token, body: big })).status;
      }
      expect(status).toBe(200);
    } finally {
      fake.script({ chunkDelayMs: 2 });
    }
  });

  it('the sandbox environment stays free of the budget', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const sandbox = await Promise.all(Array.from({ length: 12 }, () => request(`${t.url}/api/v1/generate`, { token, headers: { 'x-environment': 'sandbox' }, body: { prompt: 'hello world script', language: 'bash', max_tokens: 8_000 } })));
    expect(sandbox.map((r) => r.status)).toEqual(Array(12).fill(200));
  });
});

if (!clusterEnabled) console.log('skipping the two-instance token budget test: it needs TEST_DATABASE_URL and TEST_REDIS_URL');

describe.skipIf(!clusterEnabled)('token budget across two server processes on PostgreSQL + Redis', () => {
  let fake: FakeVendor;
  let cluster: Cluster;
  let a: SpawnedServer;
  let b: SpawnedServer;

  beforeAll(async () => {
    fake = await startOpenAIFake({ record: false, script: { reply: 'word '.repeat(40), usage: USAGE, chunkDelayMs: 2 } });
    cluster = await startCluster('tpm', { env: fakeEnv(fake) });
    [a, b] = cluster.servers as [SpawnedServer, SpawnedServer];
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
    await fake?.close();
  });

  it('40 concurrent generations across both admit at most 20,000 tokens in the minute; the rest get 429 with Retry-After', async () => {
    await awayFromWindowEnd();
    const { token } = await registerUser(a.url, { ip: nextIp() });
    expectWithinBudget(await burst([a.url, b.url], token));
  });
});
