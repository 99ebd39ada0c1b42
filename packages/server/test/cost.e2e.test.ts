/**
 * Prices and cost (CONTRACT §12.2, docs/api.md "Cost"): CODELOOM_MODEL_PRICES prices a model in USD per
 * million tokens; each call's cost is integer micro-dollars (rounded half up once per call), shown as
 * `cost_usd` on the generation (REST JSON, SSE `complete`, the channel's `complete`, GET /generations/{id}),
 * on usage rows and totals (equal to the sum of the calls, exactly), and 0 for a model without a price.
 * Rows written before migration 0008 read as 0. On SQLite and on PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/load-config.js';
import { openDatabase } from '../src/storage/open-database.js';
import { migrationProvider } from '../src/storage/migrations/index.js';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, TEST_DATABASE_URL, uniqueName, type TestServer } from './helpers/test-server.js';
import { createPgSchema, dropPgSchema } from './helpers/pg-schema.js';
import { registerUser, request } from './helpers/http.js';
import { readSse } from './helpers/sse.js';
import { connect } from './helpers/ws-client.js';

// gpt-test: gpt-4o-mini's prices. gpt-half: a price where a call lands on exactly half a micro-dollar. gpt-free and sandbox: no price.
const PRICES = { 'gpt-test': { input: 0.15, output: 0.6, cached_input: 0.075 }, 'gpt-half': { input: 0.5, output: 0.5 } };
const USAGE = { promptTokens: 1001, completionTokens: 333 };
// 1001 × 0.15 + 333 × 0.6 = 150.15 + 199.8 = 349.95 micro-dollars → 350.
const GPT_TEST_MICROS = 350;
// 3 × 0.5 + 2 × 0.5 = 2.5 micro-dollars → 3 (half up, not to even).
const HALF_USAGE = { promptTokens: 3, completionTokens: 2 };
const HALF_MICROS = 3;
const usd = (micros: number) => micros / 1_000_000;
const micros = (costUsd: number) => Math.round(costUsd * 1_000_000);

function costSuite(dialect: 'sqlite' | 'postgres') {
  let fake: FakeVendor;
  let t: TestServer;

  beforeAll(async () => {
    fake = await startOpenAIFake({ script: { reply: 'A small answer from upstream.', usage: USAGE } });
    t = await startTestServer({ dialect, env: {
      OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-test,gpt-half,gpt-free', CODELOOM_DEFAULT_MODEL: 'sandbox',
      CODELOOM_UPSTREAM_RETRIES: '0', CODELOOM_MODEL_PRICES: JSON.stringify(PRICES),
    } });
  });
  afterAll(async () => { await t?.close(); await fake?.close(); });

  it('GET /models shows each price; a model without one shows 0s', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const models = (await request(`${t.url}/api/v1/models`, { token })).body;
    const price = (id: string) => (models.data ?? models).find((m: any) => m.id === id).price;
    expect(price('gpt-test')).toEqual({ input: 0.15, output: 0.6, cached_input: 0.075 });
    expect(price('gpt-half')).toEqual({ input: 0.5, output: 0.5, cached_input: 0.5 }); // cached_input defaults to input
    expect(price('gpt-free')).toEqual({ input: 0, output: 0, cached_input: 0 });
    expect(price('sandbox')).toEqual({ input: 0, output: 0, cached_input: 0 });
  });

  it('cost_usd on the result (JSON, SSE, channel) and the saved generation; usage rows and totals sum exactly; unpriced models cost 0', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    let expected = { 'gpt-test': 0, 'gpt-half': 0, 'gpt-free': 0, sandbox: 0 } as Record<string, number>;
    const seen = (model: string, data: any, want: number) => {
      expect(data.cost_usd, `${model}: ${JSON.stringify(data.usage)}`).toBe(usd(want));
      expected = { ...expected, [model]: expected[model]! + want };
    };

    // REST JSON, and the saved generation says the same.
    const json = await request(`${t.url}/api/v1/generate`, { token, body: { prompt: 'todo API', model: 'gpt-test', max_tokens: 400 } });
    expect(json.status, json.text).toBe(200);
    expect(json.body.usage).toEqual({ prompt_tokens: USAGE.promptTokens, completion_tokens: USAGE.completionTokens });
    seen('gpt-test', json.body, GPT_TEST_MICROS);
    const saved = await request(`${t.url}/api/v1/generations/${json.body.id}`, { token });
    expect(saved.body.cost_usd).toBe(usd(GPT_TEST_MICROS));
    const listed = await request(`${t.url}/api/v1/generations`, { token });
    expect(listed.body.data.find((g: any) => g.id === json.body.id).cost_usd).toBe(usd(GPT_TEST_MICROS));

    // SSE complete.
    const sse = await fetch(`${t.url}/api/v1/generate`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'blog engine', model: 'gpt-test', max_tokens: 300, stream: true }) });
    const done = (await readSse(sse)).at(-1)!;
    expect(done.event).toBe('complete');
    seen('gpt-test', done.frame.data, GPT_TEST_MICROS);

    // The channel's complete, with a price that lands on half a micro-dollar (rounded up).
    fake.script({ reply: 'A small answer from upstream.', usage: HALF_USAGE });
    const ws = await connect(t.url, token);
    ws.send({ type: 'generate', id: 'w1', prompt: 'CLI in Go', model: 'gpt-half', max_tokens: 250 });
    const { end } = await ws.result('w1');
    expect(end.event).toBe('complete');
    seen('gpt-half', end.data, HALF_MICROS);
    ws.ws.close();

    // Models without a price cost 0, whatever they used.
    fake.script({ reply: 'A small answer from upstream.', usage: USAGE });
    const free = await request(`${t.url}/api/v1/generate`, { token, body: { prompt: 'todo API', model: 'gpt-free', max_tokens: 400 } });
    expect(free.body.usage.prompt_tokens).toBe(USAGE.promptTokens);
    seen('gpt-free', free.body, 0);
    const sandbox = await request(`${t.url}/api/v1/generate`, { token, body: { prompt: 'todo API', model: 'sandbox', max_tokens: 400 } });
    expect(sandbox.body.tokens_used).toBeGreaterThan(0);
    seen('sandbox', sandbox.body, 0);

    // The OpenAI-compatible route keeps OpenAI's wire format (no cost field) but its call is costed in usage.
    const oa = await request(`${t.url}/openai/v1/chat/completions`, { token, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'hello' }], max_tokens: 200 } });
    expect(oa.status, oa.text).toBe(200);
    expect(oa.body).not.toHaveProperty('cost_usd');
    expect(oa.body.usage).not.toHaveProperty('cost_usd');
    expected['gpt-test']! += GPT_TEST_MICROS;

    const perModel = await request(`${t.url}/api/v1/usage?group_by=model`, { token });
    expect(perModel.status, perModel.text).toBe(200);
    const row = (id: string) => perModel.body.data.find((r: any) => r.model === id);
    for (const [model, want] of Object.entries(expected)) expect(row(model).cost_usd, model).toBe(usd(want));
    const total = Object.values(expected).reduce((a, b) => a + b, 0);
    expect(total).toBe(3 * GPT_TEST_MICROS + HALF_MICROS);
    expect(perModel.body.totals.cost_usd).toBe(usd(total));
    // The totals are the rows' sum to the micro-dollar, in every grouping.
    expect(perModel.body.data.reduce((n: number, r: any) => n + micros(r.cost_usd), 0)).toBe(total);
    for (const group of ['day', 'api_key']) {
      const report = (await request(`${t.url}/api/v1/usage?group_by=${group}`, { token })).body;
      expect(report.totals.cost_usd, group).toBe(usd(total));
      expect(report.data.reduce((n: number, r: any) => n + micros(r.cost_usd), 0), group).toBe(total);
    }
  });

  it('10 concurrent priced calls (shared commits) add up to 10 × the call\'s cost', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    // 101 × 0.15 + 33 × 0.6 = 15.15 + 19.8 = 34.95 micro-dollars → 35 (small calls: ten fit in the free plan's token window at once).
    fake.script({ reply: 'A small answer from upstream.', usage: { promptTokens: 101, completionTokens: 33 } });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) =>
      request(`${t.url}/api/v1/generate`, { token, body: { prompt: `script ${i}`, model: 'gpt-test', max_tokens: 50 } })));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(answers.map((r) => r.body.cost_usd)).toEqual(Array(10).fill(usd(35)));
    const usage = await request(`${t.url}/api/v1/usage`, { token });
    expect(usage.body.totals).toMatchObject({ requests: 10, cost_usd: usd(350) });
  });
}

/**
 * Migration 0008 on a database with data: a server's rows (usage and a generation) are made before the
 * migration (it is rolled back first), then a server on the migrated database reads them as costing 0.
 */
function migrationSuite(dialect: 'sqlite' | 'postgres') {
  it('rows from before prices read as cost 0 after the migration', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codeloom-cost-'));
    const pgSchema = dialect === 'postgres' ? uniqueName('cost') : undefined;
    if (pgSchema) await createPgSchema(pgSchema);
    const database = pgSchema ? { pgSchema } : { sqliteFile: join(dir, 'codeloom.db') };
    const env = {
      HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', CODELOOM_ARGON2_MEMORY_KIB: '1024', CODELOOM_TRUST_PROXY: 'true', CODELOOM_ISSUER: 'http://codeloom.test',
      CODELOOM_MODEL_PRICES: JSON.stringify({ sandbox: { input: 1, output: 1 } }),
      ...(pgSchema ? { DATABASE_URL: TEST_DATABASE_URL! } : {}),
    };
    const start = async () => {
      const server = await buildApp(loadConfig(env), { database, redisPrefix: `${uniqueName('cost')}:` });
      return { server, url: await server.app.listen({ host: '127.0.0.1', port: 0 }) };
    };
    try {
      // A server makes an account, a key and a generation; then the database goes back to before 0008.
      const first = await start();
      const { token } = await registerUser(first.url, { ip: nextIp() });
      const key = (await request(`${first.url}/api/v1/api-keys`, { token, body: { name: 'old' } })).body.key;
      const gen = await request(`${first.url}/api/v1/generate`, { token: key, body: { prompt: 'todo API', model: 'sandbox', max_tokens: 400 } });
      expect(gen.status, gen.text).toBe(200);
      const tokens = gen.body.tokens_used;
      expect(gen.body.cost_usd).toBe(usd(tokens)); // 1 USD per million tokens: one micro-dollar a token
      await first.server.close();

      const handle = await openDatabase({ ...(pgSchema ? { databaseUrl: TEST_DATABASE_URL!, pgSchema } : { sqliteFile: database.sqliteFile! }) });
      const migrator = new Migrator({ db: handle.db, provider: migrationProvider, ...(handle.schema ? { migrationTableSchema: handle.schema } : {}) });
      // Back to before 0008 (the migrations after it are rolled back first).
      const down = await migrator.migrateTo('0007-run-api-key');
      expect(down.error).toBeUndefined();
      expect(down.results?.map((r) => r.migrationName).at(-1)).toBe('0008-cost');
      // The row as written before prices: no cost column at all.
      const old = await handle.db.selectFrom('usage_daily').selectAll().execute();
      expect(old).toHaveLength(1);
      expect(old[0]).not.toHaveProperty('cost_micros');
      await handle.close();

      // The next start migrates; the old rows cost 0, new calls are costed and added to them.
      const second = await start();
      try {
        expect((await request(`${second.url}/api/v1/generations/${gen.body.id}`, { token: key })).body.cost_usd).toBe(0);
        const before = (await request(`${second.url}/api/v1/usage`, { token: key })).body;
        expect(before.totals).toMatchObject({ requests: 1, total_tokens: tokens, cost_usd: 0 });
        expect(before.data[0].cost_usd).toBe(0);
        const again = await request(`${second.url}/api/v1/generate`, { token: key, body: { prompt: 'todo API', model: 'sandbox', max_tokens: 400 } });
        expect(again.body.cost_usd).toBe(usd(again.body.tokens_used));
        const after = (await request(`${second.url}/api/v1/usage`, { token: key })).body;
        expect(after.totals).toMatchObject({ requests: 2, total_tokens: tokens + again.body.tokens_used, cost_usd: usd(again.body.tokens_used) });
      } finally {
        await second.server.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      if (pgSchema) await dropPgSchema(pgSchema);
    }
  });
}

describe('cost on SQLite', () => { costSuite('sqlite'); migrationSuite('sqlite'); });
describe.runIf(TEST_DATABASE_URL)('cost on PostgreSQL', () => { costSuite('postgres'); migrationSuite('postgres'); });
