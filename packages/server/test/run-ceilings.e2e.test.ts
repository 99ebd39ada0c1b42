/**
 * Run ceilings (CONTRACT §12.2, docs/agents.md "Run ceilings"): `config.max_tokens` and `config.max_cost_usd` on
 * agents, workflows and execute bodies (the execute body's win). Before each step its output cap is lowered so
 * that the step's most use fits in what is left; a run with nothing left (or whose next step cannot fit even
 * with one output token) ends `failed` with `budget_exceeded`, later steps skipped, and never spends more than
 * its ceiling. The sandbox model plans its use exactly, so a max_tokens run ends on the ceiling to the token.
 * A priced upstream (the OpenAI fake, true token counts, honouring max_tokens) never costs more than
 * max_cost_usd, in the run record and in GET /usage.
 *
 * Waiting: a step held back by a tokens-per-minute window waits for the next minute; meanwhile the run record's
 * `waiting` says so (GET, and a `run_waiting` event), cleared when the step starts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { readSse } from './helpers/sse.js';
import { awayFromWindowEnd } from './helpers/limit-windows.js';
import { loadConfig } from '../src/config/load-config.js';
import { VerificationService } from '../src/modules/verify/verification-service.js';

const FINISHED = ['succeeded', 'failed', 'cancelled'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// gpt-priced: USD 1 per million prompt tokens, 4 per million completion tokens (1 and 4 micro-dollars a token).
const PRICES = { 'gpt-priced': { input: 1, output: 4 } };
const micros = (usd: number) => Math.round(usd * 1_000_000);
/** A long answer (2,000 one-token pieces), so that every step would use its whole output cap. */
const LONG = { reply: 'word '.repeat(2_000), countTokens: true, honourMaxTokens: true };

function client(base: string, token: string) {
  const api = (path: string) => `${base}/api/v1${path}`;
  const c = {
    token,
    get: (path: string) => request(api(path), { token }),
    post: (path: string, body: unknown = {}) => request(api(path), { token, body }),
    workflow: async (agents: string[], config: Record<string, unknown> = {}, model = 'sandbox') => {
      const res = await c.post('/agents/create', { name: 'team', agents: agents.map((type) => ({ type, model })), config });
      expect(res.status, res.text).toBe(201);
      return res.body.id as string;
    },
    agent: async (config: Record<string, unknown>, model = 'sandbox') => {
      const res = await c.post('/agents', { name: 'solo', model, config: { specialization: 'coder', ...config } });
      expect(res.status, res.text).toBe(201);
      return res.body.id as string;
    },
    execute: async (path: string, body: Record<string, unknown>, token = c.token) => {
      const res = await request(api(`${path}/execute`), { token, body });
      expect(res.status, res.text).toBe(202);
      return res.body;
    },
    /** Polls GET /runs/{id} until `until` holds (default: the run finished). */
    poll: async (runId: string, until: (run: any) => boolean = (r) => FINISHED.includes(r.status), timeoutMs = 20_000, everyMs = 150) => {
      const deadline = Date.now() + timeoutMs;
      for (let i = 0; ; i++) {
        const res = await c.get(`/runs/${runId}`);
        expect(res.status).toBe(200);
        if (until(res.body)) return res.body;
        if (Date.now() > deadline) throw new Error(`run ${runId} stuck: ${JSON.stringify(res.body).slice(0, 400)}`);
        await sleep(i < 10 ? 30 : everyMs);
      }
    },
    events: async (runId: string) => {
      const res = await fetch(api(`/runs/${runId}/events`), { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
      expect(res.status).toBe(200);
      return readSse(res);
    },
  };
  return c;
}

const newClient = async (base: string) => client(base, (await registerUser(base, { ip: nextIp() })).token);
const sumOf = (steps: any[], field: string) => steps.reduce((n: number, s: any) => n + s[field], 0);

describe('run ceilings', () => {
  let fake: FakeVendor;
  let t: TestServer;

  beforeAll(async () => {
    fake = await startOpenAIFake({ record: false, script: LONG });
    t = await startTestServer({ env: {
      OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-priced', CODELOOM_DEFAULT_MODEL: 'sandbox',
      CODELOOM_UPSTREAM_RETRIES: '0', CODELOOM_MODEL_PRICES: JSON.stringify(PRICES),
    } });
  });
  afterAll(async () => { await t?.close(); await fake?.close(); });

  it('validation: max_cost_usd > 0, ≤ 100000, at most six decimals; max_tokens an integer 1–100,000,000; unknown execute config fields are 400s', async () => {
    const c = await newClient(t.url);
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ max_cost_usd: 0 }, '/config/max_cost_usd'], [{ max_cost_usd: -1 }, '/config/max_cost_usd'], [{ max_cost_usd: 100_000.5 }, '/config/max_cost_usd'],
      [{ max_cost_usd: 0.0000001 }, '/config/max_cost_usd'], [{ max_cost_usd: 1.2345678 }, '/config/max_cost_usd'], [{ max_cost_usd: '5' }, '/config/max_cost_usd'],
      [{ max_tokens: 0 }, '/config/max_tokens'], [{ max_tokens: 1.5 }, '/config/max_tokens'], [{ max_tokens: 100_000_001 }, '/config/max_tokens'], [{ max_tokens: '10' }, '/config/max_tokens'],
    ];
    for (const [config, path] of bad) {
      const agent = await c.post('/agents', { name: 'a', model: 'sandbox', config });
      expect(agent.status, JSON.stringify(config)).toBe(400);
      expect(agent.body.errors.map((e: any) => e.path), JSON.stringify(config)).toContain(path);
      const wf = await c.post('/agents/create', { name: 'w', agents: [{ type: 'coder' }], config });
      expect(wf.status, JSON.stringify(config)).toBe(400);
      expect(wf.body.errors.map((e: any) => e.path), JSON.stringify(config)).toContain(path);
    }
    const agentId = await c.agent({});
    for (const [config, path] of [...bad, [{ temperature: 1 }, '/config/temperature'] as [Record<string, unknown>, string]]) {
      const res = await c.post(`/agents/${agentId}/execute`, { task: 'CLI for notes', config });
      expect(res.status, JSON.stringify(config)).toBe(400);
      expect(res.body.errors.map((e: any) => e.path), JSON.stringify(config)).toContain(path);
    }
    // Both figures at their bounds, and the per-call maxTokens next to the run's max_tokens: kept apart.
    const ok = await c.post('/agents', { name: 'a', model: 'sandbox', config: { maxTokens: 300, max_tokens: 100_000_000, max_cost_usd: 100_000 } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.config).toEqual({ maxTokens: 300, max_tokens: 100_000_000, max_cost_usd: 100_000 });
    const small = await c.post('/agents/create', { name: 'w', agents: [{ type: 'coder' }], config: { max_cost_usd: 0.000001, max_tokens: 1 } });
    expect(small.status, small.text).toBe(201);
    expect(small.body.config).toMatchObject({ max_cost_usd: 0.000001, max_tokens: 1 });
  });

  it('max_tokens on a workflow: the step that would cross it is cut to fit, the next one never starts; tokens_used ends exactly on the ceiling', async () => {
    const c = await newClient(t.url);
    const agents = ['planner', 'coder', 'tester', 'documenter'];
    const task = { task: 'REST API for todos', requirements: { framework: 'fastify' } };
    // What the run needs without a ceiling (the sandbox is deterministic: the same run uses the same tokens).
    const free = await c.poll((await c.execute(`/workflows/${await c.workflow(agents)}`, task)).id);
    expect(free.status).toBe('succeeded');
    expect(free.limits).toBeNull();
    const [planner, coder] = free.steps.map((s: any) => s.tokens_used);
    const ceiling = planner + coder - 1;
    expect(free.tokens_used).toBeGreaterThan(ceiling);

    const queued = await c.execute(`/workflows/${await c.workflow(agents, { max_tokens: ceiling })}`, task);
    expect(queued.limits).toEqual({ max_tokens: ceiling, max_cost_usd: null });
    const run = await c.poll(queued.id);
    expect(run).toMatchObject({ status: 'failed', error: { code: 'budget_exceeded' }, limits: { max_tokens: ceiling, max_cost_usd: null }, waiting: null });
    expect(run.error.message).toMatch(new RegExp(`max_tokens of ${ceiling} \\(${ceiling} tokens used\\)`));
    expect(run.steps.map((s: any) => s.status)).toEqual(['succeeded', 'succeeded', 'skipped', 'skipped']);
    // The coder's answer was cut one token short of what it would have said: the run ends on the ceiling, not past it.
    expect(run.steps[0].tokens_used).toBe(planner);
    expect(run.steps[1].tokens_used).toBe(coder - 1);
    expect(run.tokens_used).toBe(ceiling);
    expect(run.steps[1].output.length).toBeLessThan(free.steps[1].output.length);
    expect(run.steps.slice(2).every((s: any) => s.tokens_used === 0 && s.started_at === null)).toBe(true);
    // The ending is announced with the run.
    const end = (await c.events(run.id)).at(-1)!;
    expect(end.frame).toMatchObject({ event: 'error', data: { status: 429, code: 'budget_exceeded', run: { status: 'failed', tokens_used: ceiling } } });
  });

  it('a ceiling below the first step\'s prompt: no step starts at all', async () => {
    const c = await newClient(t.url);
    const run = await c.poll((await c.execute(`/workflows/${await c.workflow(['planner', 'coder'], { max_tokens: 10 })}`, { task: 'REST API for todos' })).id);
    expect(run).toMatchObject({ status: 'failed', tokens_used: 0, cost_usd: 0, error: { code: 'budget_exceeded' } });
    expect(run.error.message).toMatch(/max_tokens of 10: 0 tokens used, 10 left, and the step needs up to \d+ even with 1 output token/);
    expect(run.steps.map((s: any) => s.status)).toEqual(['skipped', 'skipped']);
    expect((await c.get('/usage')).body.totals.requests).toBe(0);
  });

  it('max_cost_usd against a priced upstream: the step that would cross it is cut to fit, the next one refused; never more than the ceiling (run record and GET /usage)', async () => {
    const c = await newClient(t.url);
    // 5,000 micro-dollars: less than the first step's prompt plus 2,000 output tokens at 4 micro-dollars each.
    const ceiling = 0.005;
    const wf = await c.workflow(['coder', 'tester', 'documenter'], { maxTokens: 2_000, max_cost_usd: ceiling }, 'gpt-priced');
    const run = await c.poll((await c.execute(`/workflows/${wf}`, { task: 'CLI for notes' })).id);
    expect(run).toMatchObject({ status: 'failed', error: { code: 'budget_exceeded' }, limits: { max_cost_usd: ceiling, max_tokens: null } });
    expect(run.error.message).toMatch(/max_cost_usd of 0.005: \$0\.00\d{4} spent, \$0\.00\d{4} left, and the step may cost up to \$0\.\d{6} even with 1 output token/);
    expect(run.steps.map((s: any) => s.status)).toEqual(['succeeded', 'skipped', 'skipped']);
    // The fake would say 2,000 words (one token each) and honours max_tokens: fewer means the ceiling lowered the cap.
    const words = run.steps[0].output.split(' ').length - 1;
    expect(words).toBeGreaterThan(0);
    expect(words).toBeLessThan(2_000);
    // Spent: never more than the ceiling; the run's cost is its steps', to the micro-dollar, and so is the account's.
    expect(micros(run.cost_usd)).toBeGreaterThan(4 * words);
    expect(micros(run.cost_usd)).toBeLessThanOrEqual(micros(ceiling));
    expect(run.cost_usd).toBe(run.steps[0].cost_usd);
    const usage = (await c.get('/usage')).body;
    expect(usage.totals.cost_usd).toBe(run.cost_usd);
    expect(usage.totals.total_tokens).toBe(run.tokens_used);
  });

  it('a run within its ceilings succeeds, its cost and limits on the record', async () => {
    const c = await newClient(t.url);
    const wf = await c.workflow(['planner', 'coder'], { maxTokens: 200, max_cost_usd: 5, max_tokens: 1_000_000 }, 'gpt-priced');
    const run = await c.poll((await c.execute(`/workflows/${wf}`, { task: 'REST API for todos' })).id);
    expect(run).toMatchObject({ status: 'succeeded', error: null, waiting: null, limits: { max_cost_usd: 5, max_tokens: 1_000_000 } });
    // Each step used its whole per-call cap (the fake has more to say): maxTokens is not the run ceiling.
    for (const s of run.steps) expect(s.output.split(' ').length - 1).toBe(200);
    expect(run.cost_usd).toBeGreaterThan(0);
    expect(micros(run.cost_usd)).toBe(sumOf(run.steps.map((s: any) => ({ m: micros(s.cost_usd) })), 'm'));
    expect((await c.get('/usage')).body.totals.cost_usd).toBe(run.cost_usd);
    // Listed runs carry the same fields.
    expect((await c.get('/runs')).body.data[0]).toMatchObject({ id: run.id, cost_usd: run.cost_usd, limits: run.limits, waiting: null });
  });

  it('the execute body\'s ceilings override the agent\'s, one by one', async () => {
    const c = await newClient(t.url);
    const tight = await c.agent({ max_tokens: 5, max_cost_usd: 2 });
    // The agent alone: 5 tokens cannot hold any step.
    const refused = await c.poll((await c.execute(`/agents/${tight}`, { task: 'CLI for notes' })).id);
    expect(refused).toMatchObject({ status: 'failed', error: { code: 'budget_exceeded' }, limits: { max_tokens: 5, max_cost_usd: 2 } });
    // The execute body's max_tokens replaces the agent's; its max_cost_usd stays.
    const queued = await c.execute(`/agents/${tight}`, { task: 'CLI for notes', config: { max_tokens: 1_000_000 } });
    expect(queued.limits).toEqual({ max_tokens: 1_000_000, max_cost_usd: 2 });
    const run = await c.poll(queued.id);
    expect(run.status).toBe('succeeded');
    // And the other way round: an agent without ceilings, a run with one.
    const open = await c.agent({});
    const limited = await c.poll((await c.execute(`/agents/${open}`, { task: 'CLI for notes', config: { max_tokens: 5 } })).id);
    expect(limited).toMatchObject({ status: 'failed', error: { code: 'budget_exceeded' }, limits: { max_tokens: 5, max_cost_usd: null } });
    // A workflow, too.
    const wf = await c.workflow(['coder'], { max_tokens: 5 });
    expect((await c.poll((await c.execute(`/workflows/${wf}`, { task: 'CLI for notes', config: { max_tokens: 1_000_000 } })).id)).status).toBe('succeeded');
  });
});

describe('a run waiting for a tokens-per-minute window', () => {
  const KEY_TPM = 5_000;
  let fake: FakeVendor;
  let t: TestServer;

  beforeAll(async () => {
    fake = await startOpenAIFake({ record: false, script: LONG });
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_UPSTREAM_RETRIES: '0' } });
  });
  afterAll(async () => { await t?.close(); await fake?.close(); });

  it('shows waiting {code: rate_limited, message, until} in GET and as a run_waiting event, cleared when the step starts', async () => {
    const c = await newClient(t.url);
    const key = (await c.post('/api-keys', { name: 'slow', tokens_per_minute: KEY_TPM })).body.key as string;
    const agent = await c.agent({ maxTokens: 100 }, 'gpt-test');
    await awayFromWindowEnd(15);
    // One call that fills the key's minute exactly (it reports KEY_TPM tokens: nothing is carried into the next minute).
    fake.script({ usage: { promptTokens: 10, completionTokens: KEY_TPM - 10 }, reply: 'filled' });
    const fill = await request(`${t.url}/openai/v1/chat/completions`, { token: key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: KEY_TPM - 100 } });
    expect(fill.status, fill.text).toBe(200);
    expect(fill.body.usage.total_tokens).toBe(KEY_TPM);
    fake.reset();
    fake.script(LONG);

    const started = Date.now();
    const queued = await c.execute(`/agents/${agent}`, { task: 'CLI for notes' }, key);
    const waiting = await c.poll(queued.id, (r) => r.waiting !== null || FINISHED.includes(r.status));
    expect(waiting.status).toBe('running');
    expect(waiting.waiting).toEqual({ code: 'rate_limited', message: expect.stringMatching(/tokens-per-minute/), until: expect.any(String) });
    const until = Date.parse(waiting.waiting.until);
    expect(new Date(until).toISOString()).toBe(waiting.waiting.until);
    expect(until).toBeGreaterThan(started);
    expect(until).toBeLessThanOrEqual(started + 61_000);
    expect(waiting.steps[0]).toMatchObject({ status: 'pending', started_at: null });

    // The next minute: the step starts (the wait is over) and the run succeeds.
    const run = await c.poll(queued.id, undefined, 75_000, 2_000);
    expect(run).toMatchObject({ status: 'succeeded', waiting: null });
    expect(Date.parse(run.steps[0].started_at)).toBeGreaterThanOrEqual(until - 1_000);
    const events = (await c.events(run.id)).map((e) => e.frame);
    const names = events.map((e: any) => e.event).filter((e: string) => e !== 'token');
    expect(names).toEqual(['run_started', 'run_waiting', 'step_started', 'step_completed', 'complete']);
    const announced = events.find((e: any) => e.event === 'run_waiting');
    expect(announced.data).toMatchObject({ id: run.id, status: 'running', waiting: waiting.waiting });
    expect(events.at(-1).data.waiting).toBeNull();
  }, 120_000);
});

const probe = await new VerificationService(loadConfig({})).status();
if (!probe.available) console.log(`skipping the ceiling test of a verified workflow: ${probe.reason}`);

describe.skipIf(!probe.available)('run ceilings in a verified workflow', () => {
  const BROKEN = '```python calc.py\ndef add(a, b):\n    return a - b\n```\n';
  const REVIEW = `VERDICT: approve\n${'word '.repeat(2_000)}`;
  let fake: FakeVendor;
  let t: TestServer;

  beforeAll(async () => {
    fake = await startOpenAIFake({ record: false });
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_UPSTREAM_RETRIES: '0' } });
  });
  afterAll(async () => { await t?.close(); await fake?.close(); });

  it('the reviewer is fitted with the checks report in its prompt: the run stays within max_tokens', async () => {
    const c = await newClient(t.url);
    // No usage from the upstream: each call is charged Codeloom's own count, the prompt's bound plus the pieces received.
    fake.script({ replies: [BROKEN, REVIEW, BROKEN, REVIEW], reply: 'VERDICT: approve', omitUsage: true, honourMaxTokens: true });
    const body = { task: 'add two numbers', language: 'python' };
    const config = { verify: true, max_iterations: 0, maxTokens: 4_000 };
    const free = await c.poll((await c.execute(`/workflows/${await c.workflow(['coder', 'reviewer'], config, 'gpt-test')}`, body)).id, undefined, 90_000, 300);
    expect(free.status, JSON.stringify(free.error)).toBe('succeeded');
    expect(free.steps[1].verification).toBeDefined(); // the checks ran before the reviewer's call: their report joined its prompt
    const reviewerPrompt = free.steps[1].tokens_used - 2_000; // its whole answer: 2,000 pieces
    // Room for the reviewer's prompt (checks report included) and 50 tokens of answer.
    const ceiling = free.steps[0].tokens_used + reviewerPrompt + 50;
    const run = await c.poll((await c.execute(`/workflows/${await c.workflow(['coder', 'reviewer'], { ...config, max_tokens: ceiling }, 'gpt-test')}`, body)).id, undefined, 90_000, 300);
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.steps[1].verification).toBeDefined();
    expect(run.tokens_used).toBeLessThanOrEqual(ceiling);
    const words = run.steps[1].output.split(' ').length - 1;
    expect(words).toBeGreaterThan(0);
    expect(words).toBeLessThan(100);
  }, 200_000);
});
