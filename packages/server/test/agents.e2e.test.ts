import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';

const TYPES = ['planner', 'architect', 'coder', 'reviewer', 'tester', 'documenter'];

/** §9 agents and workflows over real HTTP: CRUD, validation, pagination, isolation. */
describe('agents and workflows', () => {
  let t: TestServer;
  let token: string;
  const api = (path: string) => `${t.url}/api/v1${path}`;
  const createAgent = (body: unknown, tok = token) => request(api('/agents'), { token: tok, body });
  const createWorkflow = (body: unknown, tok = token) => request(api('/agents/create'), { token: tok, body });

  beforeAll(async () => {
    t = await startTestServer({ env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'sk-x', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_DEFAULT_MODEL: 'sandbox' } });
  });
  afterAll(async () => { await t.close(); });
  beforeEach(async () => { token = (await registerUser(t.url, { ip: nextIp() })).token; });

  it('creates an agent (201), lists, reads and deletes it', async () => {
    const res = await createAgent({ name: 'Reviewer Rita', model: 'sandbox', config: { temperature: 0.1, maxTokens: 1024, specialization: 'reviewer' } });
    expect(res.status).toBe(201);
    const a = res.body;
    expect(a).toEqual({ id: expect.stringMatching(/^agt_/), name: 'Reviewer Rita', model: 'sandbox', type: 'reviewer', config: { temperature: 0.1, maxTokens: 1024, specialization: 'reviewer' }, created_at: expect.stringMatching(/Z$/) });
    // A specialization naming a type makes that type (case-insensitive); free text or none makes a coder.
    expect((await createAgent({ name: 'P', model: 'sandbox', config: { specialization: ' Planner ' } })).body.type).toBe('planner');
    expect((await createAgent({ name: 'C', model: 'gpt-test', config: { specialization: 'REST APIs in Go' } })).body).toMatchObject({ type: 'coder', model: 'gpt-test' });
    expect((await createAgent({ name: 'plain', model: 'sandbox' })).body.type).toBe('coder');

    expect((await request(api(`/agents/${a.id}`), { token })).body).toEqual(a);
    const list = await request(api('/agents?limit=3'), { token });
    expect(list.body.pagination).toEqual({ page: 1, limit: 3, total: 4, total_pages: 2 });
    expect(list.body.data.at(-1).id).not.toBe(a.id);
    const page2 = await request(api('/agents?limit=3&page=2'), { token });
    expect(page2.body.data.map((x: { id: string }) => x.id)).toEqual([a.id]);
    expect((await request(api('/agents?page=5'), { token })).body).toEqual({ data: [], pagination: { page: 5, limit: 20, total: 4, total_pages: 1 } });
    for (const q of ['page=0', 'limit=0', 'limit=101', 'page=2.5']) expect((await request(api(`/agents?${q}`), { token })).body.code, q).toBe('validation_failed');

    expect((await request(api(`/agents/${a.id}`), { token, method: 'DELETE' })).body).toEqual({ success: true });
    expect((await request(api(`/agents/${a.id}`), { token })).status).toBe(404);
    expect((await request(api(`/agents/${a.id}`), { token, method: 'DELETE' })).status).toBe(404);
    expect((await request(api('/agents'), { token })).body.pagination.total).toBe(3);
  });

  it('validates agents: unknown model names the available ones; name is required', async () => {
    const model = await createAgent({ name: 'x', model: 'gpt-9000' });
    expect(model.status).toBe(400);
    expect(model.body.code).toBe('validation_failed');
    expect(model.body.detail).toContain('gpt-9000');
    expect(model.body.detail).toContain('sandbox');
    expect(model.body.detail).toContain('gpt-test');
    expect(model.body.errors[0].path).toBe('/model');
    const cases: Array<[unknown, string]> = [
      [{ model: 'sandbox' }, '/name'], [{ name: '', model: 'sandbox' }, '/name'], [{ name: '  ', model: 'sandbox' }, '/name'],
      [{ name: 'x'.repeat(101), model: 'sandbox' }, '/name'], [{ name: 'x' }, '/model'],
      [{ name: 'x', model: 'sandbox', config: { temperature: 'hot' } }, '/config/temperature'],
    ];
    for (const [body, path] of cases) {
      const res = await createAgent(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect((await request(api('/agents'), { token })).body.pagination.total).toBe(0);
  });

  it('creates a workflow (201 wfl_), defaults models, lists, reads and deletes it', async () => {
    const res = await createWorkflow({ name: 'team', agents: [{ type: 'planner', model: 'sandbox' }, { type: 'coder' }, { type: 'reviewer', model: 'gpt-test' }], config: { max_iterations: 1, temperature: 0.3, style: 'terse' } });
    expect(res.status).toBe(201);
    const w = res.body;
    expect(w).toEqual({
      id: expect.stringMatching(/^wfl_/), name: 'team', created_at: expect.stringMatching(/Z$/),
      agents: [{ type: 'planner', model: 'sandbox' }, { type: 'coder', model: 'sandbox' }, { type: 'reviewer', model: 'gpt-test' }],
      config: { max_iterations: 1, temperature: 0.3, style: 'terse' },
    });
    expect((await createWorkflow({ name: 'no config', agents: [{ type: 'coder' }] })).body.config).toEqual({});
    expect((await request(api(`/workflows/${w.id}`), { token })).body).toEqual(w);
    const list = await request(api('/workflows?limit=1'), { token });
    expect(list.body.pagination).toEqual({ page: 1, limit: 1, total: 2, total_pages: 2 });
    expect((await request(api('/workflows?page=2&limit=1'), { token })).body.data[0].id).toBe(w.id);
    expect((await request(api('/workflows?limit=101'), { token })).status).toBe(400);
    // Workflows are not agents.
    expect((await request(api(`/agents/${w.id}`), { token })).status).toBe(404);
    expect((await request(api(`/workflows/${w.id}`), { token, method: 'DELETE' })).body).toEqual({ success: true });
    expect((await request(api(`/workflows/${w.id}`), { token })).status).toBe(404);
    expect((await request(api(`/workflows/${w.id}/execute`), { token, body: { task: 'x' } })).status).toBe(404);
  });

  it('validates workflows: types, models, agent count, config', async () => {
    const type = await createWorkflow({ name: 'x', agents: [{ type: 'coder' }, { type: 'wizard' }] });
    expect(type.status).toBe(400);
    expect(type.body.code).toBe('validation_failed');
    const typeError = type.body.errors.find((e: { path: string }) => e.path === '/agents/1/type');
    for (const name of TYPES) expect(typeError.message).toContain(name);

    const model = await createWorkflow({ name: 'x', agents: [{ type: 'coder', model: 'sandbox' }, { type: 'tester', model: 'nope' }] });
    expect(model.status).toBe(400);
    expect(model.body.errors[0].path).toBe('/agents/1/model');
    expect(model.body.detail).toContain('sandbox');
    expect(model.body.detail).toContain('gpt-test');

    const cases: Array<[unknown, string]> = [
      [{ name: 'x', agents: [] }, '/agents'],
      [{ name: 'x', agents: Array.from({ length: 50 }, () => ({ type: 'coder' })) }, '/agents'],
      [{ name: 'x', agents: Array.from({ length: 13 }, () => ({ type: 'coder' })) }, '/agents'],
      [{ name: 'x' }, '/agents'],
      [{ agents: [{ type: 'coder' }] }, '/name'],
      [{ name: ' ', agents: [{ type: 'coder' }] }, '/name'],
      [{ name: 'x', agents: [{}] }, '/agents/0/type'],
      [{ name: 'x', agents: [{ type: 'coder' }], config: { max_iterations: 6 } }, '/config/max_iterations'],
      [{ name: 'x', agents: [{ type: 'coder' }], config: { max_iterations: -1 } }, '/config/max_iterations'],
      [{ name: 'x', agents: [{ type: 'coder' }], config: { nested: { a: 1 } } }, '/config/nested'],
    ];
    for (const [body, path] of cases) {
      const res = await createWorkflow(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors.map((e: { path: string }) => e.path), JSON.stringify(body).slice(0, 80)).toContain(path);
    }
    expect((await createWorkflow({ name: 'x', agents: Array.from({ length: 12 }, () => ({ type: 'coder' })), config: { max_iterations: 5 } })).status).toBe(201);
    expect((await request(api('/workflows'), { token })).body.pagination.total).toBe(1);
  });

  it('validates execute bodies', async () => {
    const wf = (await createWorkflow({ name: 'x', agents: [{ type: 'planner' }] })).body;
    const agent = (await createAgent({ name: 'a', model: 'sandbox' })).body;
    for (const path of [`/workflows/${wf.id}/execute`, `/agents/${agent.id}/execute`]) {
      for (const body of [{}, { task: '' }, { task: 'x'.repeat(16_001) }, { task: 'x', requirements: { database: { a: 1 } } }, { task: 'x', language: 'klingon' }]) {
        const res = await request(api(path), { token, body });
        expect(res.status, `${path} ${JSON.stringify(body).slice(0, 50)}`).toBe(400);
        expect(res.body.code).toBe('validation_failed');
      }
      expect((await request(api(path), { token, body: { task: 'x', project_id: 'prj_nope' } })).status).toBe(404);
    }
    expect((await request(api('/runs'), { token })).body.pagination.total).toBe(0);
  });

  it('another account\'s agent and workflow are 404 on every route, execute included', async () => {
    const agent = (await createAgent({ name: 'secret agent', model: 'sandbox' })).body;
    const wf = (await createWorkflow({ name: 'secret flow', agents: [{ type: 'coder' }] })).body;
    const project = (await request(api('/projects'), { token, body: { name: 'secret project' } })).body;
    const other = (await registerUser(t.url, { ip: nextIp() })).token;
    const probes: Array<[string, string, unknown?]> = [
      ['GET', `/agents/${agent.id}`], ['DELETE', `/agents/${agent.id}`], ['POST', `/agents/${agent.id}/execute`, { task: 'x' }],
      ['GET', `/workflows/${wf.id}`], ['DELETE', `/workflows/${wf.id}`], ['POST', `/workflows/${wf.id}/execute`, { task: 'x' }],
    ];
    for (const [method, path, body] of probes) {
      const res = await request(api(path), { token: other, method, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('not_found');
      expect(res.text).not.toContain('secret');
    }
    expect((await request(api('/agents'), { token: other })).body.data).toEqual([]);
    expect((await request(api('/workflows'), { token: other })).body.data).toEqual([]);
    // Executing one's own workflow into another account's project is a 404 too.
    const own = (await createWorkflow({ name: 'mine', agents: [{ type: 'coder' }] }, other)).body;
    const into = await request(api(`/workflows/${own.id}/execute`), { token: other, body: { task: 'x', project_id: project.id } });
    expect(into.status).toBe(404);
    expect((await request(api('/runs'), { token: other })).body.pagination.total).toBe(0);
    // Nothing was harmed.
    expect((await request(api(`/agents/${agent.id}`), { token })).status).toBe(200);
    expect((await request(api(`/workflows/${wf.id}`), { token })).status).toBe(200);
  });

  it('needs write:code to create or execute, read:code to read', async () => {
    const wf = (await createWorkflow({ name: 'x', agents: [{ type: 'coder' }] })).body;
    const ro = (await request(api('/api-keys'), { token, body: { name: 'ro', scopes: ['read:code'] } })).body.key;
    expect((await request(api('/workflows'), { token: ro })).status).toBe(200);
    for (const [path, body] of [['/agents', { name: 'x', model: 'sandbox' }], ['/agents/create', { name: 'x', agents: [{ type: 'coder' }] }], [`/workflows/${wf.id}/execute`, { task: 'x' }]] as const) {
      const res = await request(api(path), { token: ro, body });
      expect(res.status, path).toBe(403);
      expect(res.body.code).toBe('insufficient_scope');
    }
    expect((await request(api(`/workflows/${wf.id}`), { token: ro, method: 'DELETE' })).status).toBe(403);
  });
});
