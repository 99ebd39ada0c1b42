import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from '../../server/test/fakes/openai-fake.js';
import type { FakeVendor } from '../../server/test/fakes/fake-vendor.js';
import { CodeloomError, PageIterator, type Codeloom, type Page, type Project, type Run } from '../src/index.js';
import { clientFor, eventually, newUser, startTestServer, type TestServer } from './helpers.js';

const fail = (e: unknown) => e as CodeloomError;

describe('every resource against a real server', () => {
  let t: TestServer;
  let fake: FakeVendor;
  let client: Codeloom;

  beforeAll(async () => {
    // An OpenAI-compatible fake that never answers gives runs that stay `running` until cancelled.
    fake = await startOpenAIFake({ script: { hang: true } });
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'slow-model', CODELOOM_DEFAULT_MODEL: 'sandbox' } });
    client = (await newUser(t)).client;
  });
  afterAll(async () => { await t.close(); await fake.close(); });

  it('models.list and languages.list', async () => {
    const models = await client.models.list();
    expect(models.map((m) => m.id).sort()).toEqual(['sandbox', 'slow-model']);
    expect(models.find((m) => m.default)?.id).toBe('sandbox');
    const languages = await client.languages.list();
    expect(languages.map((l) => l.id)).toEqual(expect.arrayContaining(['typescript', 'python', 'rust']));
    expect(languages[0]).toHaveProperty('aliases');
  });

  it('generate, then generations.list / page / get', async () => {
    const result = await client.generate({ prompt: 'REST API for todos', language: 'typescript', context: { framework: 'fastify', includeTests: true } });
    expect(result.id).toMatch(/^gen_/);
    expect(result.model).toBe('sandbox');
    expect(result.language).toBe('typescript');
    expect(result.files.length).toBeGreaterThan(1);
    expect(result.files.map((f) => f.content)).toContain(result.code);
    expect(result.tokens_used).toBeGreaterThan(0);
    expect(typeof result.processing_time).toBe('number');

    const second = await client.generate({ prompt: 'word counter CLI', language: 'python' });
    const all = await client.generations.list({ limit: 1 }).toArray();
    expect(all.map((g) => g.id)).toEqual([second.id, result.id]);
    const page2 = await client.generations.page(2, { limit: 1 });
    expect(page2.pagination).toEqual({ page: 2, limit: 1, total: 2, total_pages: 2 });
    expect(page2.data[0]!.id).toBe(result.id);
    const got = await client.generations.get(result.id);
    expect(got.files).toEqual(result.files);
    expect(got.code).toBe(result.code);

    const notFound = await client.generations.get('gen_nope').catch(fail);
    expect(notFound).toMatchObject({ status: 404, code: 'not_found' });
    const invalid = await client.generate({ prompt: '', model: 'no-such-model' }).catch(fail);
    expect(invalid).toMatchObject({ status: 400, code: 'validation_failed' });
  });

  it('templates.list and projects: create, get, update, files, list pages, delete', async () => {
    const { client: c } = await newUser(t);
    const templates = await c.templates.list();
    expect(templates.length).toBeGreaterThan(0);
    const template = templates.find((tpl) => tpl.id === 'fastify-api') ?? templates[0]!;
    expect(template.files.length).toBeGreaterThan(0);

    const project = await c.projects.create({ name: 'From template', description: 'made by the SDK', template: template.id });
    expect(project).toMatchObject({ name: 'From template', description: 'made by the SDK', template: template.id });
    expect(project.id).toMatch(/^prj_/);
    expect(project.files_count).toBe(template.files.length);

    const files = await c.projects.files.list(project.id, { limit: 2 }).toArray();
    expect(files.map((f) => f.path).sort()).toEqual([...template.files].sort());
    const nested = files.find((f) => f.path.includes('/')) ?? files[0]!;
    const file = await c.projects.files.get(project.id, nested.path);
    expect(file.path).toBe(nested.path);
    expect(file.content.length).toBe(file.size > 0 ? file.content.length : 0);
    expect((await c.projects.files.page(project.id, 1, { limit: 1 })).pagination.total).toBe(template.files.length);
    expect(await c.projects.files.get(project.id, 'no/such/file.ts').catch(fail)).toMatchObject({ status: 404, code: 'not_found' });

    const renamed = await c.projects.update(project.id, { name: 'Renamed' });
    expect(renamed.name).toBe('Renamed');
    expect((await c.projects.get(project.id)).name).toBe('Renamed');

    await c.projects.create({ name: 'Second' });
    await c.projects.create({ name: 'Third' });
    // Iterating walks every page; awaiting gives the first; pages() gives pages.
    const names: string[] = [];
    for await (const p of c.projects.list({ limit: 2 })) names.push(p.name);
    expect(names).toEqual(['Third', 'Second', 'Renamed']);
    const iterator = c.projects.list({ limit: 2 });
    expect(iterator).toBeInstanceOf(PageIterator);
    const first: Page<Project> = await iterator;
    expect(first.pagination).toEqual({ page: 1, limit: 2, total: 3, total_pages: 2 });
    const pages: number[] = [];
    for await (const page of c.projects.list({ limit: 2 }).pages()) pages.push(page.data.length);
    expect(pages).toEqual([2, 1]);
    expect((await c.projects.page(2, { limit: 2 })).data.map((p) => p.name)).toEqual(['Renamed']);
    expect((await c.projects.page(9, { limit: 2 })).data).toEqual([]);
    // list({ page, limit }): awaiting gives that page, iterating walks from it.
    const second: Page<Project> = await c.projects.list({ page: 2, limit: 2 });
    expect(second.pagination).toEqual({ page: 2, limit: 2, total: 3, total_pages: 2 });
    expect(second.data.map((p) => p.name)).toEqual(['Renamed']);
    expect((await c.projects.list({ page: 2, limit: 1 }).toArray()).map((p) => p.name)).toEqual(['Second', 'Renamed']);
    expect((await c.projects.files.list(project.id, { page: 2, limit: 1 })).pagination.page).toBe(2);
    expect((await c.generations.list({ page: 1, limit: 1 })).pagination.limit).toBe(1);

    // A generation into a project saves its files there.
    const gen = await c.generate({ prompt: 'hello world', language: 'python', project_id: project.id });
    const saved = await c.projects.files.get(project.id, gen.files[0]!.path);
    expect(saved.content).toBe(gen.files[0]!.content);

    expect(await c.projects.delete(project.id)).toEqual({ success: true });
    expect(await c.projects.get(project.id).catch(fail)).toMatchObject({ status: 404, code: 'not_found' });
    expect(await c.projects.create({ name: 'x', template: 'no-such-template' }).catch(fail)).toMatchObject({ status: 400 });
    expect(await c.projects.page(0).catch(fail)).toMatchObject({ status: 400, code: 'validation_failed' });
  });

  it('agents: create, list, get, execute, delete', async () => {
    const { client } = await newUser(t);
    const agent = await client.agents.create({ name: 'Reviewer', model: 'sandbox', config: { temperature: 0.2, maxTokens: 2048, specialization: 'reviewer' } });
    expect(agent).toMatchObject({ name: 'Reviewer', model: 'sandbox', type: 'reviewer', config: { temperature: 0.2, maxTokens: 2048 } });
    expect(agent.id).toMatch(/^agt_/);
    expect((await client.agents.get(agent.id)).id).toBe(agent.id);
    expect((await client.agents.list().toArray()).map((a) => a.id)).toContain(agent.id);

    const run = await client.agents.execute(agent.id, { task: 'review a todo API', requirements: { framework: 'fastify' } });
    expect(run.id).toMatch(/^run_/);
    expect(run.agent_id).toBe(agent.id);
    expect(['queued', 'running', 'succeeded']).toContain(run.status);
    const done = await eventually(async () => { const r = await client.runs.get(run.id); return r.status === 'succeeded' ? r : undefined; });
    expect(done.steps).toHaveLength(1);
    expect(done.steps[0]!.agent).toBe('reviewer');

    expect(await client.agents.delete(agent.id)).toEqual({ success: true });
    expect(await client.agents.get(agent.id).catch(fail)).toMatchObject({ status: 404, code: 'not_found' });
    expect((await client.runs.get(run.id)).id).toBe(run.id); // runs outlive their agent
    expect(await client.agents.create({ name: 'x', model: 'no-such-model' }).catch(fail)).toMatchObject({ status: 400 });
  });

  it('workflows: create (POST /agents/create), list, get, execute, delete; runs: get, list, cancel', async () => {
    const { client } = await newUser(t);
    const wf = await client.workflows.create({ name: 'small team', agents: [{ type: 'planner', model: 'sandbox' }, { type: 'coder', model: 'sandbox' }, { type: 'reviewer', model: 'sandbox' }], config: { max_iterations: 1 } });
    expect(wf.id).toMatch(/^wfl_/);
    expect(wf.agents.map((a) => a.type)).toEqual(['planner', 'coder', 'reviewer']);
    expect((await client.workflows.get(wf.id)).name).toBe('small team');
    expect((await client.workflows.list().toArray()).map((w) => w.id)).toContain(wf.id);

    const run = await client.workflows.execute(wf.id, { task: 'REST API for todos', requirements: { database: 'sqlite', framework: 'fastify', authentication: 'jwt' } });
    expect(run.workflow_id).toBe(wf.id);
    const done = await eventually(async () => { const r = await client.runs.get(run.id); return r.status === 'succeeded' ? r : undefined; });
    expect(done.result!.files.length).toBeGreaterThan(0);
    expect(done.result!.summary.length).toBeGreaterThan(0);

    // A run on the never-answering model stays running until cancelled.
    const slow = await client.workflows.create({ name: 'slow', agents: [{ type: 'coder', model: 'slow-model' }] });
    const hanging = await client.workflows.execute(slow.id, { task: 'anything' });
    await eventually(async () => ((await client.runs.get(hanging.id)).status === 'running' ? true : undefined));
    const cancelled: Run = await client.runs.cancel(hanging.id);
    expect(cancelled.status).toBe('cancelled');
    expect(await client.runs.cancel(hanging.id).catch(fail)).toMatchObject({ status: 409, code: 'conflict' });

    const runs = await client.runs.list({ limit: 1 }).toArray();
    expect(runs.map((r) => r.id)).toEqual(expect.arrayContaining([run.id, hanging.id]));
    expect((await client.runs.page(1, { limit: 1 })).data[0]!.id).toBe(hanging.id);

    expect(await client.workflows.delete(wf.id)).toEqual({ success: true });
    expect(await client.workflows.get(wf.id).catch(fail)).toMatchObject({ status: 404, code: 'not_found' });
    expect(await client.workflows.create({ name: 'bad', agents: [{ type: 'wizard' as never }] }).catch(fail)).toMatchObject({ status: 400, code: 'validation_failed' });
  });

  it('apiKeys: create, list, use, revoke; an API key cannot manage keys', async () => {
    const { client: c, ip } = await newUser(t);
    const created = await c.apiKeys.create({ name: 'ci', scopes: ['read:code'] });
    expect(created.key).toMatch(/^cl_live_/);
    expect(created).toMatchObject({ name: 'ci', scopes: ['read:code'], environment: 'production' });
    const listed = await c.apiKeys.list().toArray();
    expect(listed.map((k) => k.id)).toEqual([created.id]);
    expect(listed[0]).not.toHaveProperty('key');

    const keyClient = clientFor(t, { apiKey: created.key }, {}, ip);
    expect((await keyClient.verify()).credential).toMatchObject({ type: 'api_key', scopes: ['read:code'] });
    expect(await keyClient.projects.page(1)).toMatchObject({ data: [] });
    const scope = await keyClient.projects.create({ name: 'nope' }).catch(fail);
    expect(scope).toMatchObject({ status: 403, code: 'insufficient_scope' });
    expect(scope.detail).toContain('write:code');
    expect(await keyClient.apiKeys.create({ name: 'x' }).catch(fail)).toMatchObject({ status: 403, code: 'insufficient_scope' });
    expect(await keyClient.stream.generate({ prompt: 'x' }).result.catch(fail)).toMatchObject({ status: 403, code: 'insufficient_scope' });

    expect(await c.apiKeys.revoke(created.id)).toEqual({ success: true });
    expect(await keyClient.verify().catch(fail)).toMatchObject({ status: 401, code: 'invalid_token' });
    expect(await c.apiKeys.list().toArray()).toEqual([]);
  });

  it('apiKeys limits (create, update, list) and usage.get per day, model and key', async () => {
    const { client: c, ip } = await newUser(t);
    const key = await c.apiKeys.create({ name: 'limited', requests_per_minute: 30, tokens_per_minute: 5000, monthly_tokens: 100_000 });
    expect(key.limits).toEqual({ requests_per_minute: 30, tokens_per_minute: 5000, monthly_tokens: 100_000 });
    const updated = await c.apiKeys.update(key.id, { name: 'limited 2', monthly_tokens: null, requests_per_minute: 10 });
    expect(updated).toMatchObject({ id: key.id, name: 'limited 2', limits: { requests_per_minute: 10, tokens_per_minute: 5000, monthly_tokens: null } });
    expect((await c.apiKeys.list().toArray())[0]!.limits).toEqual(updated.limits);
    const over = await c.apiKeys.update(key.id, { tokens_per_minute: 10_000_000 }).catch(fail);
    expect(over).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(await c.apiKeys.update('key_nope', { name: 'x' }).catch(fail)).toMatchObject({ status: 404, code: 'not_found' });

    const viaKey = await clientFor(t, { apiKey: key.key }, {}, ip).generate({ prompt: 'word counter CLI', model: 'sandbox' });
    const viaSession = await c.generate({ prompt: 'REST API for todos', model: 'sandbox' });
    const today = new Date().toISOString().slice(0, 10);
    const byDay = await c.usage.get({ from: today, to: today });
    expect(byDay).toMatchObject({ from: today, to: today, group_by: 'day', data: [{ day: today, requests: 2, failed_requests: 0 }] });
    expect(byDay.totals.total_tokens).toBe(byDay.totals.prompt_tokens + byDay.totals.completion_tokens);
    expect(byDay.totals.total_tokens).toBeGreaterThan(0);
    const byModel = await c.usage.get({ group_by: 'model' });
    expect(byModel.data.map((r) => [r.model, r.requests])).toEqual([['sandbox', 2]]);
    const byKey = await c.usage.get({ group_by: 'api_key' });
    expect(byKey.data.map((r) => [r.api_key_id, r.requests]).sort()).toEqual([[key.id, 1], [null, 1]].sort());
    expect(viaKey.tokens_used + viaSession.tokens_used).toBeGreaterThan(0);
    expect(await c.usage.get({ from: today, to: '2000-01-01' }).catch(fail)).toMatchObject({ status: 400, code: 'validation_failed' });
  });

  it('per-call timeout and AbortSignal', async () => {
    expect(await client.generate({ prompt: 'REST API for todos' }, { timeout: 1 }).catch(fail)).toMatchObject({ status: 0, code: 'timeout' });
    expect(await client.generate({ prompt: 'x' }, { signal: AbortSignal.abort() }).catch(fail)).toMatchObject({ status: 499, code: 'cancelled' });
    const controller = new AbortController();
    const pending = client.generate({ prompt: 'REST API for todos' }, { signal: controller.signal });
    controller.abort();
    expect(await pending.catch(fail)).toMatchObject({ code: 'cancelled' });
  });

  it('another account\'s resources are 404', async () => {
    const { client: other } = await newUser(t);
    const mine = await client.projects.create({ name: 'private' });
    expect(await other.projects.get(mine.id).catch(fail)).toMatchObject({ status: 404, code: 'not_found' });
  });
});
