/**
 * Usage accounting (GET /api/v1/usage, docs/api.md "Usage"): every model call — POST /generate as JSON
 * and SSE, the WebSocket channel, the OpenAI-compatible routes, each step of a run — is counted by account, API key, model and
 * day, failed calls included; the totals equal the sum of the generations the test made, per key and per
 * model, on SQLite and on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, TEST_DATABASE_URL, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { readSse } from './helpers/sse.js';
import { connect } from './helpers/ws-client.js';

type Tokens = { prompt: number; completion: number };
const add = (a: Tokens, b: Tokens): Tokens => ({ prompt: a.prompt + b.prompt, completion: a.completion + b.completion });
const ZERO: Tokens = { prompt: 0, completion: 0 };

function usageSuite(dialect: 'sqlite' | 'postgres') {
  let fake: FakeVendor;
  let t: TestServer;

  beforeAll(async () => {
    fake = await startOpenAIFake({ script: { reply: 'A small answer from upstream.' } });
    t = await startTestServer({ dialect, env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_UPSTREAM_RETRIES: '0' } });
  });
  afterAll(async () => { await t?.close(); await fake?.close(); });

  it('totals equal the generations made, per API key and per model; failed calls count with the tokens they used', async () => {
    const { token: session } = await registerUser(t.url, { ip: nextIp() });
    const keys: Record<string, { id: string; key: string }> = {};
    for (const name of ['a', 'b']) {
      const res = await request(`${t.url}/api/v1/api-keys`, { token: session, body: { name } });
      keys[name] = { id: res.body.id, key: res.body.key };
    }
    const byKey: Record<string, Tokens> = { a: ZERO, b: ZERO, session: ZERO };
    const byModel: Record<string, Tokens> = { sandbox: ZERO, 'gpt-test': ZERO };
    const note = (who: string, model: string, tk: Tokens) => { byKey[who] = add(byKey[who]!, tk); byModel[model] = add(byModel[model]!, tk); };

    // Key a: /generate as JSON (sandbox and upstream) and as SSE.
    for (const model of ['sandbox', 'gpt-test']) {
      const res = await request(`${t.url}/api/v1/generate`, { token: keys.a!.key, body: { prompt: 'todo API', model, max_tokens: 400 } });
      expect(res.status, res.text).toBe(200);
      note('a', model, { prompt: res.body.usage.prompt_tokens, completion: res.body.usage.completion_tokens });
    }
    const sse = await fetch(`${t.url}/api/v1/generate`, { method: 'POST', headers: { authorization: `Bearer ${keys.a!.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'blog engine in Rust', model: 'sandbox', max_tokens: 300, stream: true }) });
    const done = (await readSse(sse)).at(-1)!;
    expect(done.event).toBe('complete');
    note('a', 'sandbox', { prompt: done.frame.data.usage.prompt_tokens, completion: done.frame.data.usage.completion_tokens });

    // Key b: the OpenAI-compatible routes, and a call the upstream refuses (502: one failed request, no output tokens).
    for (const model of ['gpt-test', 'sandbox']) {
      const res = await request(`${t.url}/openai/v1/chat/completions`, { token: keys.b!.key, body: { model, messages: [{ role: 'user', content: 'hello there' }], max_tokens: 200 } });
      expect(res.status, res.text).toBe(200);
      note('b', model, { prompt: res.body.usage.prompt_tokens, completion: res.body.usage.completion_tokens });
    }
    fake.script({ failNext: { count: 1, status: 500 } });
    const failed = await request(`${t.url}/openai/v1/chat/completions`, { token: keys.b!.key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'fail me' }], max_tokens: 50 } });
    expect(failed.status).toBe(502);

    // The session, on the WebSocket channel.
    const ws = await connect(t.url, session);
    ws.send({ type: 'generate', id: 'w1', prompt: 'CLI in Go', model: 'sandbox', max_tokens: 250 });
    const { end } = await ws.result('w1');
    expect(end.event).toBe('complete');
    note('session', 'sandbox', { prompt: end.data.usage.prompt_tokens, completion: end.data.usage.completion_tokens });
    ws.ws.close();

    const perKey = await request(`${t.url}/api/v1/usage?group_by=api_key`, { token: session });
    expect(perKey.status, perKey.text).toBe(200);
    const row = (id: string | null) => perKey.body.data.find((r: any) => r.api_key_id === id);
    expect(row(keys.a!.id)).toMatchObject({ requests: 3, failed_requests: 0, prompt_tokens: byKey.a!.prompt, completion_tokens: byKey.a!.completion, total_tokens: byKey.a!.prompt + byKey.a!.completion });
    expect(row(null)).toMatchObject({ requests: 1, failed_requests: 0, prompt_tokens: byKey.session!.prompt, completion_tokens: byKey.session!.completion });
    const b = row(keys.b!.id);
    expect(b).toMatchObject({ requests: 3, failed_requests: 1, completion_tokens: byKey.b!.completion });
    const failedPrompt = b.prompt_tokens - byKey.b!.prompt;
    expect(failedPrompt).toBeGreaterThan(0); // the refused call's prompt, as estimated: it was sent upstream

    const perModel = await request(`${t.url}/api/v1/usage?group_by=model`, { token: session });
    const m = (id: string) => perModel.body.data.find((r: any) => r.model === id);
    expect(m('sandbox')).toMatchObject({ requests: 4, failed_requests: 0, prompt_tokens: byModel.sandbox!.prompt, completion_tokens: byModel.sandbox!.completion });
    expect(m('gpt-test')).toMatchObject({ requests: 3, failed_requests: 1, prompt_tokens: byModel['gpt-test']!.prompt + failedPrompt, completion_tokens: byModel['gpt-test']!.completion });

    const all = Object.values(byModel).reduce(add, ZERO);
    // No prices on this server: every call costs 0 (test/cost.e2e.test.ts prices them).
    const expectedTotals = { requests: 7, failed_requests: 1, prompt_tokens: all.prompt + failedPrompt, completion_tokens: all.completion, total_tokens: all.prompt + failedPrompt + all.completion, cost_usd: 0 };
    expect(perKey.body.totals).toEqual(expectedTotals);
    expect(perModel.body.totals).toEqual(expectedTotals);
    const perDay = await request(`${t.url}/api/v1/usage`, { token: session });
    expect(perDay.body).toMatchObject({ group_by: 'day', totals: expectedTotals });
    expect(perDay.body.data).toEqual([{ day: new Date().toISOString().slice(0, 10), ...expectedTotals }]);

    // Owner-scoped: another account sees none of it; the sandbox environment is counted apart.
    const { token: other } = await registerUser(t.url, { ip: nextIp() });
    expect((await request(`${t.url}/api/v1/usage`, { token: other })).body).toMatchObject({ data: [], totals: { requests: 0 } });
    expect((await request(`${t.url}/api/v1/usage`, { token: session, headers: { 'x-environment': 'sandbox' } })).body.totals.requests).toBe(0);
  });

  it('counts every step of a workflow run, equal to the run\'s tokens_used', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const wf = await request(`${t.url}/api/v1/agents/create`, { token, body: { name: 'two steps', agents: [{ type: 'planner', model: 'sandbox' }, { type: 'coder', model: 'sandbox' }] } });
    expect(wf.status, wf.text).toBe(201);
    const queued = await request(`${t.url}/api/v1/workflows/${wf.body.id}/execute`, { token, body: { task: 'CLI for notes' } });
    expect(queued.status, queued.text).toBe(202);
    let run: any;
    for (let i = 0; i < 60; i++) { // within the account's 100 requests a minute
      run = (await request(`${t.url}/api/v1/runs/${queued.body.id}`, { token })).body;
      if (['succeeded', 'failed', 'cancelled'].includes(run.status)) break;
      await new Promise((r) => setTimeout(r, i < 10 ? 30 : 250));
    }
    expect(run.status).toBe('succeeded');
    expect(run.tokens_used).toBeGreaterThan(0);
    const usage = await request(`${t.url}/api/v1/usage?group_by=model`, { token });
    expect(usage.body.data).toEqual([expect.objectContaining({ model: 'sandbox', requests: run.steps.length, failed_requests: 0, total_tokens: run.tokens_used })]);
  });

  it('30 concurrent calls (counted in shared commits) are all counted, tokens included', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const sandbox = { 'x-environment': 'sandbox' };
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) =>
      request(`${t.url}/api/v1/generate`, { token, headers: sandbox, body: { prompt: `hello world script ${i}`, language: 'bash', max_tokens: 300 } })));
    expect(answers.map((r) => r.status)).toEqual(Array(30).fill(200));
    const tokens = answers.reduce((n, r) => n + r.body.usage.prompt_tokens + r.body.usage.completion_tokens, 0);
    const usage = await request(`${t.url}/api/v1/usage`, { token, headers: sandbox });
    expect(usage.body.totals).toMatchObject({ requests: 30, failed_requests: 0, total_tokens: tokens });
  });

  it('validates the range: bad dates, from after to and unknown group_by are 400s; a past range is empty', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    for (const q of ['from=yesterday', 'to=2026-02-30', 'from=2026-05-02&to=2026-05-01', 'group_by=week', 'from=2020-01-01&to=2026-01-01', 'extra=1']) {
      const res = await request(`${t.url}/api/v1/usage?${q}`, { token });
      expect(res.status, q).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
    const past = await request(`${t.url}/api/v1/usage?from=2020-01-01&to=2020-01-31T12:00:00Z`, { token });
    expect(past.body).toMatchObject({ from: '2020-01-01', to: '2020-01-31', data: [], totals: { requests: 0, total_tokens: 0 } });
    expect((await request(`${t.url}/api/v1/usage`)).status).toBe(401);
  });
}

describe('usage on SQLite', () => usageSuite('sqlite'));
describe.runIf(TEST_DATABASE_URL)('usage on PostgreSQL', () => usageSuite('postgres'));
