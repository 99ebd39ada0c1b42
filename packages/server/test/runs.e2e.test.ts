import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import pg from 'pg';
import { startTestServer, nextIp, TEST_DATABASE_URL, uniqueName, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';

const ALL = ['planner', 'architect', 'coder', 'reviewer', 'tester', 'documenter'];
const FINISHED = ['succeeded', 'failed', 'cancelled'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls as one account; `headers` may pick the sandbox environment (X-Environment: sandbox). */
function client(base: string, token: string, headers: Record<string, string> = {}) {
  const api = (path: string) => `${base}/api/v1${path}`;
  const c = {
    token,
    get: (path: string) => request(api(path), { token, headers }),
    post: (path: string, body: unknown = {}) => request(api(path), { token, headers, body }),
    workflow: async (agents: string[], config: Record<string, unknown> = {}, model = 'sandbox') => {
      const res = await c.post('/agents/create', { name: 'team', agents: agents.map((type) => ({ type, model })), config });
      expect(res.status).toBe(201);
      return res.body.id as string;
    },
    execute: async (workflowId: string, body: Record<string, unknown>) => {
      const res = await c.post(`/workflows/${workflowId}/execute`, body);
      expect(res.status, res.text).toBe(202);
      return res.body;
    },
    /** Polls GET /runs/{id} until `until` holds (default: the run finished). */
    poll: async (runId: string, until: (run: any) => boolean = (r) => FINISHED.includes(r.status), timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      for (let i = 0; ; i++) {
        const res = await c.get(`/runs/${runId}`);
        expect(res.status).toBe(200);
        if (until(res.body)) return res.body;
        if (Date.now() > deadline) throw new Error(`run ${runId} stuck: ${JSON.stringify(res.body).slice(0, 400)}`);
        await sleep(i < 10 ? 30 : 200); // the account's 100 requests a minute are enough for a long run
      }
    },
  };
  return c;
}

/** The main project → workflow → run flow, on whichever storage the server uses. */
async function projectRunFlow(base: string) {
  const c = client(base, (await registerUser(base, { ip: nextIp() })).token);
  const project = (await c.post('/projects', { name: 'todo service', template: 'fastify-api' })).body;
  const wf = await c.workflow(['planner', 'coder', 'tester']);
  const queued = await c.execute(wf, { task: 'REST API for todos', requirements: { framework: 'fastify', database: 'sqlite', authentication: 'none' }, project_id: project.id });
  expect(queued).toMatchObject({ id: expect.stringMatching(/^run_/), status: 'queued', workflow_id: wf, agent_id: null, project_id: project.id, result: null, error: null, tokens_used: 0 });
  expect(queued.steps.map((s: any) => [s.agent, s.status])).toEqual([['planner', 'pending'], ['coder', 'pending'], ['tester', 'pending']]);
  const run = await c.poll(queued.id);
  expect(run.status).toBe('succeeded');
  expect(run.steps.map((s: any) => [s.index, s.agent, s.status])).toEqual([[0, 'planner', 'succeeded'], [1, 'coder', 'succeeded'], [2, 'tester', 'succeeded']]);
  expect(run.steps[0].output).toMatch(/^1\. [\s\S]*^2\. /m);
  expect(run.steps[0].files ?? []).toEqual([]);
  for (const s of run.steps) {
    expect(s.tokens_used).toBeGreaterThan(0);
    expect(s.started_at <= s.finished_at).toBe(true);
  }
  expect(run.steps[0].finished_at <= run.steps[1].started_at).toBe(true);
  expect(run.tokens_used).toBe(run.steps.reduce((n: number, s: any) => n + s.tokens_used, 0));
  expect(run.result.files.length).toBeGreaterThan(1);
  expect(run.result.files.some((f: any) => /test/.test(f.path))).toBe(true);
  expect(run.result.summary).toContain('planner → coder → tester');
  expect(run.started_at).toBeTruthy();
  expect(run.finished_at).toBeTruthy();
  // The result files are in the project, next to the template's.
  const files = (await c.get(`/projects/${project.id}/files?limit=100`)).body;
  const paths = files.data.map((f: any) => f.path);
  for (const f of run.result.files) {
    expect(paths).toContain(f.path);
    expect((await c.get(`/projects/${project.id}/files/${f.path}`)).body.content).toBe(f.content);
  }
  expect(paths).toContain('.gitignore');
  const list = (await c.get('/runs')).body;
  expect(list.pagination.total).toBe(1);
  expect(list.data[0]).toMatchObject({ id: run.id, status: 'succeeded' });
}

describe('runs on the sandbox model and the OpenAI fake', () => {
  let t: TestServer;
  let fake: FakeVendor;
  let c: ReturnType<typeof client>;

  beforeAll(async () => {
    fake = await startOpenAIFake();
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-x', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_UPSTREAM_RETRIES: '0' } });
  });
  afterAll(async () => { await t.close(); await fake.close(); });
  beforeEach(async () => {
    fake.reset();
    c = client(t.url, (await registerUser(t.url, { ip: nextIp() })).token);
  });

  it('runs a three-step workflow into a project (planner, coder, tester)', () => projectRunFlow(t.url));

  it('runs a six-step workflow with every agent type, each answering in its own form', async () => {
    const run = await c.poll((await c.execute(await c.workflow(ALL), { task: 'REST API for todos', requirements: { framework: 'fastify' } })).id);
    expect(run.status).toBe('succeeded');
    expect(run.steps.map((s: any) => s.agent)).toEqual(ALL);
    expect(run.steps.every((s: any) => s.status === 'succeeded' && s.iteration === 0 && s.error === null)).toBe(true);
    const [planner, architect, coder, reviewer, tester, documenter] = run.steps;
    expect(planner.output).toMatch(/^1\. /m);
    expect(planner.output).not.toContain('[object');
    expect(architect.files.map((f: any) => f.path)).toEqual(['docs/DESIGN.md']);
    expect(coder.files.length).toBeGreaterThan(0);
    expect(reviewer.output.split('\n')[0]).toBe('VERDICT: approve');
    expect(reviewer.output).toMatch(/^- /m);
    expect(reviewer.verdict).toBe('approve');
    expect(tester.files.length).toBeGreaterThan(0);
    expect(documenter.files.map((f: any) => f.path)).toEqual(['README.md']);
    const paths = run.result.files.map((f: any) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['docs/DESIGN.md', 'README.md', ...coder.files.map((f: any) => f.path)]));
    expect(new Set(paths).size).toBe(paths.length);
    // A later step's file replaces an earlier one at the same path.
    expect(run.result.files.find((f: any) => f.path === 'README.md').content).toBe(documenter.files[0].content);
    expect(run.result.summary).toContain('Final review: approved');
    expect(run.tokens_used).toBeGreaterThan(0);
  });

  // Review loops run in the sandbox environment: its runs use none of the plan's tokens-per-minute budget,
  // which a loop's growing prompts would otherwise exhaust (the step would wait for the next minute).
  it.each([0, 1, 2])('bounds the review loop by max_iterations=%i', async (max) => {
    const sb = client(t.url, c.token, { 'x-environment': 'sandbox' });
    const wf = await sb.workflow(['coder', 'reviewer', 'documenter'], { max_iterations: max });
    const run = await sb.poll((await sb.execute(wf, { task: 'CLI for notes [review:changes]' })).id);
    expect(run.status).toBe('succeeded');
    const agents = run.steps.map((s: any) => `${s.agent}${s.iteration}`);
    const loop = Array.from({ length: max }, (_, i) => [`coder${i + 1}`, `reviewer${i + 1}`]).flat();
    expect(agents).toEqual(['coder0', 'reviewer0', ...loop, 'documenter0']);
    expect(run.steps.filter((s: any) => s.agent === 'coder')).toHaveLength(1 + max);
    expect(run.steps.map((s: any) => s.index)).toEqual(run.steps.map((_: unknown, i: number) => i));
    expect(run.steps.filter((s: any) => s.agent === 'reviewer').every((s: any) => s.verdict === 'changes_requested' && s.output.startsWith('VERDICT: changes_requested'))).toBe(true);
    expect(run.result.summary).toContain('changes still requested');
    if (max) expect(run.result.summary).toContain(`sent the work back ${max} time`);
    expect((await c.get(`/runs/${run.id}`)).status).toBe(404); // sandbox runs are kept apart from production ones
  });

  it('stops the loop once the reviewer approves ([review:changes=1])', async () => {
    const sb = client(t.url, c.token, { 'x-environment': 'sandbox' });
    const run = await sb.poll((await sb.execute(await sb.workflow(['coder', 'reviewer'], { max_iterations: 5 }), { task: 'library for dates [review:changes=1]' })).id);
    expect(run.steps.map((s: any) => `${s.agent}:${s.verdict ?? '-'}`)).toEqual(['coder:-', 'reviewer:changes_requested', 'coder:-', 'reviewer:approve']);
    expect(run.result.summary).toContain('Final review: approved');
  });

  it('executes a single agent', async () => {
    const agent = (await c.post('/agents', { name: 'planner', model: 'sandbox', config: { specialization: 'planner' } })).body;
    const res = await c.post(`/agents/${agent.id}/execute`, { task: 'REST API for todos', language: 'python' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'queued', agent_id: agent.id, workflow_id: null });
    const run = await c.poll(res.body.id);
    expect(run.steps).toHaveLength(1);
    expect(run.steps[0]).toMatchObject({ agent: 'planner', model: 'sandbox', status: 'succeeded' });
    expect(run.steps[0].output).toMatch(/^1\. /m);
    expect(run.result.files).toEqual([]);
    const coder = (await c.post('/agents', { name: 'coder', model: 'sandbox' })).body;
    const code = await c.poll((await c.post(`/agents/${coder.id}/execute`, { task: 'REST API for todos', language: 'python' })).body.id);
    expect(code.result.files.some((f: any) => f.path.endsWith('.py'))).toBe(true);
    // Deleting the agent keeps its runs.
    await request(`${t.url}/api/v1/agents/${coder.id}`, { token: c.token, method: 'DELETE' });
    expect((await c.get(`/runs/${code.id}`)).body.status).toBe('succeeded');
  });

  it('cancels a running run: the model call is aborted, the step failed, the rest skipped', async () => {
    fake.script({ reply: 'word '.repeat(400), chunkDelayMs: 20 });
    const wf = await c.workflow(['planner', 'coder', 'tester']);
    const slow = (await c.post('/agents/create', { name: 'slow', agents: [{ type: 'planner', model: 'sandbox' }, { type: 'coder', model: 'gpt-test' }, { type: 'tester', model: 'sandbox' }] })).body.id;
    const run = await c.execute(slow, { task: 'REST API for todos' });
    await c.poll(run.id, (r) => r.steps[1].status === 'running');
    while (fake.requests.length === 0) await sleep(10);
    await sleep(100);
    const res = await c.post(`/runs/${run.id}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('cancelled');
    expect(res.body.steps.map((s: any) => s.status)).toEqual(['succeeded', 'failed', 'skipped']);
    expect(res.body.steps[1].error.code).toBe('cancelled');
    expect(res.body.error).toMatchObject({ code: 'cancelled', step: 1 });
    await fake.waitForAborts(1, 3_000);
    expect((await c.get(`/runs/${run.id}`)).body.status).toBe('cancelled');
    const again = await c.post(`/runs/${run.id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
    // A queued run (two per account execute at once) is cancelled before it starts.
    const busy = [await c.execute(slow, { task: 'a' }), await c.execute(slow, { task: 'b' })];
    const waiting = await c.execute(wf, { task: 'c' });
    await c.poll(busy[1].id, (r) => r.status === 'running');
    expect((await c.get(`/runs/${waiting.id}`)).body.status).toBe('queued');
    const cancelled = (await c.post(`/runs/${waiting.id}/cancel`)).body;
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.steps.every((s: any) => s.status === 'skipped')).toBe(true);
    for (const r of busy) expect((await c.post(`/runs/${r.id}/cancel`)).body.status).toBe('cancelled');
    await sleep(100);
    expect((await c.get(`/runs/${waiting.id}`)).body.status).toBe('cancelled');
  });

  it('gives each step the task, the requirements and the earlier outputs; workflow temperature and maxTokens reach every step', async () => {
    fake.script({ reply: 'Done.\n\n```typescript src/todos.ts\nexport const todos = [];\n```\n' });
    const wf = (await c.post('/agents/create', { name: 'ctx', agents: [{ type: 'planner', model: 'sandbox' }, { type: 'coder', model: 'gpt-test' }, { type: 'tester', model: 'gpt-test' }], config: { temperature: 0.3, maxTokens: 500 } })).body.id;
    const run = await c.poll((await c.execute(wf, { task: 'REST API for todos', requirements: { database: 'postgres', framework: 'fastify', authentication: 'jwt' } })).id);
    expect(run.status).toBe('succeeded');
    expect(fake.requests).toHaveLength(2);
    const [coder, tester] = fake.requests.map((r) => r.body);
    for (const body of [coder, tester]) {
      expect(body).toMatchObject({ model: 'gpt-test', temperature: 0.3, max_tokens: 500 });
      const user = body.messages.at(-1).content as string;
      for (const line of ['Task: REST API for todos', '- database: postgres', '- framework: fastify', '- authentication: jwt', `## Output of the planner (step 1)\n${run.steps[0].output}`]) expect(user).toContain(line);
    }
    expect(coder.messages.at(-1).content).not.toContain('Output of the coder');
    expect(tester.messages.at(-1).content).toContain(`## Output of the coder (step 2)\n${run.steps[1].output}`);
    expect(run.steps[1].files).toEqual([{ path: 'src/todos.ts', content: 'export const todos = [];\n' }]);
  });

  it('fails the run when a model step fails, with the step\'s error, and skips the rest', async () => {
    fake.script({ failNext: { count: 1, status: 500, message: 'upstream exploded' } });
    const wf = (await c.post('/agents/create', { name: 'f', agents: [{ type: 'planner', model: 'sandbox' }, { type: 'coder', model: 'gpt-test' }, { type: 'tester', model: 'sandbox' }, { type: 'documenter' }] })).body.id;
    const run = await c.poll((await c.execute(wf, { task: 'REST API for todos' })).id);
    expect(run.status).toBe('failed');
    expect(run.steps.map((s: any) => s.status)).toEqual(['succeeded', 'failed', 'skipped', 'skipped']);
    expect(run.steps[1].error.code).toBe('upstream_error');
    expect(run.error).toMatchObject({ code: 'upstream_error', step: 1, message: expect.any(String) });
    expect(run.result).toBeNull();
    expect(fake.requests).toHaveLength(1);
  });

  it('lists runs newest first, paginated; another account sees none of them', async () => {
    const wf = await c.workflow(['planner']);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await c.execute(wf, { task: `task ${i}` })).id);
    await c.poll(ids[2]!);
    const page1 = (await c.get('/runs?limit=2')).body;
    expect(page1.pagination).toEqual({ page: 1, limit: 2, total: 3, total_pages: 2 });
    expect(page1.data.map((r: any) => r.id)).toEqual([ids[2], ids[1]]);
    expect((await c.get('/runs?limit=2&page=2')).body.data.map((r: any) => r.id)).toEqual([ids[0]]);
    expect((await c.get('/runs?page=3&limit=2')).body).toEqual({ data: [], pagination: { page: 3, limit: 2, total: 3, total_pages: 2 } });
    for (const q of ['page=0', 'limit=0', 'limit=101', 'page=x']) expect((await c.get(`/runs?${q}`)).body.code, q).toBe('validation_failed');
    // Deleting the workflow keeps its runs.
    await request(`${t.url}/api/v1/workflows/${wf}`, { token: c.token, method: 'DELETE' });
    expect((await c.get(`/runs/${ids[0]}`)).status).toBe(200);
    const other = client(t.url, (await registerUser(t.url, { ip: nextIp() })).token);
    expect((await other.get('/runs')).body.pagination.total).toBe(0);
    for (const res of [await other.get(`/runs/${ids[0]}`), await other.post(`/runs/${ids[0]}/cancel`), await other.get('/runs/run_nope')]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
  });
});

describe.skipIf(!TEST_DATABASE_URL)('runs on PostgreSQL', () => {
  const schema = uniqueName('runs');
  const sql = async (text: string) => {
    const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await db.connect();
    try { await db.query(text); } finally { await db.end(); }
  };
  let t: TestServer | undefined;
  beforeAll(async () => { t = await startTestServer({ dialect: 'postgres', pgSchema: schema }); });
  afterAll(async () => {
    await t?.close();
    await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`); // leave the shared database as it was
  });
  it('runs the project → workflow → run flow', () => projectRunFlow(t!.url));
});
