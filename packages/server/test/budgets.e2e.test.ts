/**
 * Budgets in US dollars (CONTRACT §12.2, docs/api.md "Budgets"): per organization, member or API key, by
 * UTC day, UTC month or in total; every model call reserves its most cost in each budget that applies with
 * its tokens, atomically, and settles to its real cost. A call that would exceed a budget is a 429
 * `budget_exceeded` (Retry-After at the period's reset; none for `total`); one whose most cost alone is more
 * than the amount is a 400 `request_too_large`. What a budget has spent survives a restart (it is rebuilt
 * from the usage rows). Across two server processes on PostgreSQL + Redis, 50 concurrent calls never spend
 * more than the budget, and each is charged exactly its reported use.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/load-config.js';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { clusterEnabled, startCluster, type Cluster } from './helpers/cluster.js';
import { registerUser, request, type JsonResponse } from './helpers/http.js';
import { readSse } from './helpers/sse.js';
import { buildGenerationMessages } from '../src/modules/generate/generation-prompt.js';
import { promptTokenBound } from '../src/modules/generate/model-call.js';

// USD per million tokens: a call of 20 prompt + 10 completion tokens costs 20 × 100 + 10 × 1,000 = 12,000 micro-dollars.
const PRICES = { 'gpt-test': { input: 100, output: 1_000 } };
const USAGE = { promptTokens: 20, completionTokens: 10 };
const CALL_MICROS = 12_000;
/** What a call reserves in a budget: its prompt's bound at the input price plus its max_tokens at the output price. */
const reserveMicros = (maxTokens: number, prompt = 'a todo API') => promptTokenBound(buildGenerationMessages(prompt, 'typescript', undefined)) * 100 + maxTokens * 1_000;
const RESERVE = reserveMicros(50);
const fakeEnv = (fake: FakeVendor) => ({
  OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_DEFAULT_MODEL: 'sandbox',
  CODELOOM_UPSTREAM_RETRIES: '0', CODELOOM_MODEL_PRICES: JSON.stringify(PRICES),
});
const usd = (micros: number) => micros / 1_000_000;
const micros = (costUsd: number) => Math.round(costUsd * 1_000_000);

async function account(base: string) {
  const user = await registerUser(base, { ip: nextIp() });
  const profile = await request(`${base}/api/v1/user/profile`, { token: user.token });
  return { ...user, orgId: profile.body.organization.id as string };
}

const generate = (base: string, token: string, extra: Record<string, unknown> = {}) =>
  request(`${base}/api/v1/generate`, { token, body: { prompt: 'a todo API', model: 'gpt-test', max_tokens: 50, ...extra } });

describe('budgets: the API', () => {
  let fake: FakeVendor;
  let t: TestServer;
  beforeAll(async () => {
    fake = await startOpenAIFake({ script: { reply: 'Short answer.', usage: USAGE } });
    t = await startTestServer({ env: fakeEnv(fake) });
  });
  afterAll(async () => { await t?.close(); await fake?.close(); });

  it('creates, lists, reads, changes and deletes a budget; another account sees a 404', async () => {
    const a = await account(t.url);
    const created = await request(`${t.url}/api/v1/budgets`, { token: a.token, body: { scope: { type: 'organization', id: a.orgId }, amount_usd: 12.5, period: 'month' } });
    expect(created.status, created.text).toBe(201);
    const now = new Date();
    expect(created.body).toMatchObject({
      scope: { type: 'organization', id: a.orgId }, amount_usd: 12.5, period: 'month', spent_usd: 0, alert_thresholds: [0.5, 0.8, 1],
      resets_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
    });
    expect(created.body.id).toMatch(/^bud_/);
    const id = created.body.id as string;

    expect((await request(`${t.url}/api/v1/budgets`, { token: a.token })).body.data.map((b: any) => b.id)).toEqual([id]);
    expect((await request(`${t.url}/api/v1/budgets/${id}`, { token: a.token })).body).toEqual(created.body);

    const patched = await request(`${t.url}/api/v1/budgets/${id}`, { method: 'PATCH', token: a.token, body: { amount_usd: 0.000001, period: 'total', alert_thresholds: [0.9, 0.25] } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ amount_usd: 0.000001, period: 'total', alert_thresholds: [0.25, 0.9], resets_at: null });

    const other = await account(t.url);
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      const res = await request(`${t.url}/api/v1/budgets/${id}`, { method, token: other.token, ...(method === 'PATCH' ? { body: { amount_usd: 1 } } : {}) });
      expect(res.status, `${method}: ${res.text}`).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    expect((await request(`${t.url}/api/v1/budgets`, { token: other.token })).body.data).toEqual([]);

    expect((await request(`${t.url}/api/v1/budgets/${id}`, { method: 'DELETE', token: a.token })).body).toEqual({ success: true });
    expect((await request(`${t.url}/api/v1/budgets/${id}`, { token: a.token })).status).toBe(404);
  });

  it('refuses bad input with 400 problem documents that name the field', async () => {
    const a = await account(t.url);
    const other = await account(t.url);
    const otherKey = await request(`${t.url}/api/v1/api-keys`, { token: other.token, body: { name: 'theirs' } });
    const bad: Array<[unknown, string]> = [
      [{ scope: { type: 'organization', id: a.orgId }, amount_usd: 0, period: 'day' }, 'amount_usd'],
      [{ scope: { type: 'organization', id: a.orgId }, amount_usd: -1, period: 'day' }, 'amount_usd'],
      [{ scope: { type: 'organization', id: a.orgId }, amount_usd: 1.0000001, period: 'day' }, 'amount_usd'],
      [{ scope: { type: 'organization', id: a.orgId }, amount_usd: 1, period: 'week' }, 'period'],
      [{ scope: { type: 'organization', id: a.orgId }, amount_usd: 1, period: 'day', alert_thresholds: [1.5] }, 'alert_thresholds'],
      [{ scope: { type: 'team', id: a.orgId }, amount_usd: 1, period: 'day' }, 'scope'],
      [{ scope: { type: 'organization', id: other.orgId }, amount_usd: 1, period: 'day' }, 'scope/id'],
      [{ scope: { type: 'member', id: other.user.id }, amount_usd: 1, period: 'day' }, 'scope/id'],
      [{ scope: { type: 'api_key', id: otherKey.body.id }, amount_usd: 1, period: 'day' }, 'scope/id'],
      [{ amount_usd: 1, period: 'day' }, 'scope'],
    ];
    for (const [body, field] of bad) {
      const res = await request(`${t.url}/api/v1/budgets`, { token: a.token, body });
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body.code).toBe('validation_failed');
      expect(JSON.stringify(res.body.errors ?? res.body.detail)).toContain(field);
    }
    const created = await request(`${t.url}/api/v1/budgets`, { token: a.token, body: { scope: { type: 'member', id: a.user.id }, amount_usd: 1, period: 'day' } });
    expect(created.status).toBe(201);
    const empty = await request(`${t.url}/api/v1/budgets/${created.body.id}`, { method: 'PATCH', token: a.token, body: {} });
    expect(empty.status).toBe(400);
  });

  it('a call that would exceed a daily budget is a 429 budget_exceeded with Retry-After at midnight UTC; spent_usd is exact', async () => {
    const a = await account(t.url);
    // Room for the first call's reservation, not for a second one after it.
    const budget = (await request(`${t.url}/api/v1/budgets`, { token: a.token, body: { scope: { type: 'organization', id: a.orgId }, amount_usd: usd(RESERVE + CALL_MICROS - 1), period: 'day' } })).body;
    const first = await generate(t.url, a.token);
    expect(first.status, first.text).toBe(200);
    expect(first.body.cost_usd).toBe(usd(CALL_MICROS));
    expect((await request(`${t.url}/api/v1/budgets/${budget.id}`, { token: a.token })).body.spent_usd).toBe(usd(CALL_MICROS));

    const refused = await generate(t.url, a.token);
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body.code).toBe('budget_exceeded');
    expect(refused.body.detail).toContain(budget.id);
    const midnight = Math.ceil(Date.now() / 86_400_000) * 86_400;
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Math.abs(Math.floor(Date.now() / 1000) + retryAfter - midnight)).toBeLessThanOrEqual(2);
    // Refused calls never reach the upstream and cost nothing.
    expect((await request(`${t.url}/api/v1/budgets/${budget.id}`, { token: a.token })).body.spent_usd).toBe(usd(CALL_MICROS));

    // The sandbox model costs nothing: it is still served.
    expect((await generate(t.url, a.token, { model: 'sandbox' })).status).toBe(200);
    // Raising the amount lets calls through again at once.
    await request(`${t.url}/api/v1/budgets/${budget.id}`, { method: 'PATCH', token: a.token, body: { amount_usd: 1 } });
    expect((await generate(t.url, a.token)).status).toBe(200);
    expect((await request(`${t.url}/api/v1/budgets/${budget.id}`, { token: a.token })).body.spent_usd).toBe(usd(2 * CALL_MICROS));
  });

  it('a total budget refuses without Retry-After; a call that could never fit is a 400 request_too_large; SSE says the same', async () => {
    const a = await account(t.url);
    const amount = reserveMicros(20) + 2 * CALL_MICROS;
    await request(`${t.url}/api/v1/budgets`, { token: a.token, body: { scope: { type: 'organization', id: a.orgId }, amount_usd: usd(amount), period: 'total' } });
    const tooLarge = await generate(t.url, a.token, { max_tokens: 1_000 });
    expect(tooLarge.status, tooLarge.text).toBe(400);
    expect(tooLarge.body.code).toBe('request_too_large');
    expect(tooLarge.body.detail).toContain(`may cost up to $${(reserveMicros(1_000) / 1e6).toFixed(6)}`);
    expect(tooLarge.body.detail).toContain(`budget of $${(amount / 1e6).toFixed(6)}`);

    let refused: JsonResponse | undefined;
    for (let i = 0; i < 10 && !refused; i++) {
      const res = await generate(t.url, a.token, { max_tokens: 20 });
      if (res.status !== 200) refused = res;
    }
    expect(refused?.status, refused?.text).toBe(429);
    expect(refused!.body.code).toBe('budget_exceeded');
    expect(refused!.headers.get('retry-after')).toBeNull();
    // The OpenAI and Anthropic SDKs retry a 429 unless told not to.
    expect(refused!.headers.get('x-should-retry')).toBe('false');

    const sse = await fetch(`${t.url}/api/v1/generate`, { method: 'POST', headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'x', model: 'gpt-test', max_tokens: 20, stream: true }) });
    expect(sse.status).toBe(429);
    expect((await sse.json()).code).toBe('budget_exceeded');
  });

  it('an API key budget binds that key only; a member budget binds the member', async () => {
    const a = await account(t.url);
    const key = (await request(`${t.url}/api/v1/api-keys`, { token: a.token, body: { name: 'ci' } })).body;
    await request(`${t.url}/api/v1/budgets`, { token: a.token, body: { scope: { type: 'api_key', id: key.id }, amount_usd: 0.000001, period: 'month' } });
    const viaKey = await generate(t.url, key.key);
    expect(viaKey.status, viaKey.text).toBe(400); // its most cost alone is more than the key's whole budget
    expect(viaKey.body.code).toBe('request_too_large');
    expect((await generate(t.url, a.token)).status).toBe(200);

    const member = await request(`${t.url}/api/v1/budgets`, { token: a.token, body: { scope: { type: 'member', id: a.user.id }, amount_usd: 0.000001, period: 'day' } });
    expect(member.status).toBe(201);
    expect((await generate(t.url, a.token)).body.code).toBe('request_too_large');
    const usage = await request(`${t.url}/api/v1/usage`, { token: a.token });
    expect(usage.body.totals.cost_usd).toBe(usd(CALL_MICROS));
  });
});

describe('budgets: what was spent survives a restart (SQLite file)', () => {
  let fake: FakeVendor;
  let dir: string;
  beforeAll(async () => {
    fake = await startOpenAIFake({ script: { reply: 'Short answer.', usage: USAGE } });
    dir = mkdtempSync(join(tmpdir(), 'codeloom-budgets-'));
  });
  afterAll(async () => { await fake?.close(); rmSync(dir, { recursive: true, force: true }); });

  const start = async () => {
    const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', CODELOOM_ARGON2_MEMORY_KIB: '1024', CODELOOM_TRUST_PROXY: 'true', CODELOOM_ISSUER: 'http://codeloom.test', ...fakeEnv(fake) });
    const server = await buildApp(config, { database: { sqliteFile: join(dir, 'codeloom.db') } });
    return { server, url: await server.app.listen({ host: '127.0.0.1', port: 0 }) };
  };

  it('spent_usd and the refusals go on after the server restarts', async () => {
    let s = await start();
    const a = await account(s.url);
    // Room for three calls in a row (each reserving RESERVE, settling to CALL_MICROS), not four.
    const budget = (await request(`${s.url}/api/v1/budgets`, { token: a.token, body: { scope: { type: 'organization', id: a.orgId }, amount_usd: usd(2 * CALL_MICROS + RESERVE), period: 'month' } })).body;
    for (let i = 0; i < 2; i++) expect((await generate(s.url, a.token)).status).toBe(200);
    await s.server.close();

    s = await start();
    try {
      expect((await request(`${s.url}/api/v1/budgets/${budget.id}`, { token: a.token })).body.spent_usd).toBe(usd(2 * CALL_MICROS));
      // Two calls' cost is spent: one more call's reservation fits, a second does not.
      expect((await generate(s.url, a.token)).status).toBe(200);
      const refused = await generate(s.url, a.token);
      expect(refused.body.code).toBe('budget_exceeded');
      expect((await request(`${s.url}/api/v1/budgets/${budget.id}`, { token: a.token })).body.spent_usd).toBe(usd(3 * CALL_MICROS));
    } finally {
      await s.server.close();
    }
  });
});

if (!clusterEnabled) console.log('skipping the two-instance dollar budget test: it needs TEST_DATABASE_URL and TEST_REDIS_URL');

describe.skipIf(!clusterEnabled)('a dollar budget across two server processes on PostgreSQL + Redis', () => {
  let fake: FakeVendor;
  let cluster: Cluster;
  beforeAll(async () => {
    // Slow chunks keep many calls in flight at once, so reservations race.
    fake = await startOpenAIFake({ script: { reply: 'One two three four five six seven eight nine ten', chunks: ['One ', 'two ', 'three ', 'four ', 'five ', 'six ', 'seven ', 'eight ', 'nine ', 'ten'], usage: USAGE, chunkDelayMs: 20 } });
    cluster = await startCluster('budget', { env: fakeEnv(fake) });
  }, 60_000);
  afterAll(async () => { await cluster?.stop(); await fake?.close(); });

  it('50 concurrent calls over both instances: dollars admitted never exceed the budget; each call is charged its reported use', async () => {
    const [a, b] = cluster.servers.map((s) => s.url) as [string, string];
    const owner = await account(a);
    const amount = usd(4 * RESERVE); // four reservations at a time; many more calls' real cost
    const budget = (await request(`${a}/api/v1/budgets`, { token: owner.token, body: { scope: { type: 'organization', id: owner.orgId }, amount_usd: amount, period: 'day' } })).body;
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => {
      const stream = i % 5 === 0;
      const base = i % 2 ? b : a;
      if (!stream) return generate(base, owner.token);
      return fetch(`${base}/api/v1/generate`, { method: 'POST', headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'a todo API', model: 'gpt-test', max_tokens: 50, stream: true }) })
        .then(async (res): Promise<JsonResponse> => {
          if (res.status !== 200) return { status: res.status, headers: res.headers, body: await res.json(), text: '' } as JsonResponse;
          const done = (await readSse(res)).at(-1)!;
          return { status: done.event === 'complete' ? 200 : 500, headers: res.headers, body: done.frame.data, text: JSON.stringify(done.frame) } as JsonResponse;
        });
    }));
    let admitted = 0;
    for (const res of results) {
      if (res.status === 200) {
        admitted++;
        expect(res.body.usage).toEqual({ prompt_tokens: USAGE.promptTokens, completion_tokens: USAGE.completionTokens });
        expect(res.body.cost_usd).toBe(usd(CALL_MICROS));
      } else {
        expect(res.status, res.text).toBe(429);
        expect(res.body.code).toBe('budget_exceeded');
      }
    }
    expect(admitted).toBeGreaterThanOrEqual(4);
    const spent = (await request(`${b}/api/v1/budgets/${budget.id}`, { token: owner.token })).body.spent_usd;
    expect(micros(spent)).toBe(admitted * CALL_MICROS);
    expect(micros(spent)).toBeLessThanOrEqual(micros(amount));
    // Usage rows (the database) say the same as the budget's counter (Redis).
    const usage = await request(`${a}/api/v1/usage`, { token: owner.token });
    expect(micros(usage.body.totals.cost_usd)).toBe(admitted * CALL_MICROS);
    // The upstream saw only the admitted calls.
    expect(fake.requests.length).toBe(admitted);
  }, 60_000);
});
