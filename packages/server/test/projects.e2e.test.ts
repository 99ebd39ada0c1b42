import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** §9 projects over real HTTP: CRUD, pagination edges, templates, files, generate into a project, isolation. */
describe('projects', () => {
  let t: TestServer;
  let fake: FakeVendor;
  let token: string;
  const api = (path: string) => `${t.url}/api/v1${path}`;
  const create = (body: unknown, tok = token) => request(api('/projects'), { token: tok, body });

  beforeAll(async () => {
    fake = await startOpenAIFake();
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-x', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_DEFAULT_MODEL: 'sandbox' } });
  });
  afterAll(async () => { await t.close(); await fake.close(); });
  beforeEach(async () => {
    fake.reset();
    token = (await registerUser(t.url, { ip: nextIp() })).token;
  });

  it('creates (201, §9 shape), reads, patches and deletes a project with its files', async () => {
    const res = await create({ name: '  Todo API ', description: 'A small API' });
    expect(res.status).toBe(201);
    const p = res.body;
    expect(Object.keys(p).sort()).toEqual(['created_at', 'description', 'files_count', 'id', 'name', 'template', 'updated_at']);
    expect(p).toMatchObject({ name: 'Todo API', description: 'A small API', template: null, files_count: 0 });
    expect(p.id).toMatch(/^prj_/);
    expect(p.created_at).toMatch(ISO);
    expect(p.updated_at).toMatch(ISO);
    expect((await create({ name: 'no description' })).body.description).toBe('');

    expect((await request(api(`/projects/${p.id}`), { token })).body).toEqual(p);
    await new Promise((r) => setTimeout(r, 5));
    const patched = await request(api(`/projects/${p.id}`), { token, method: 'PATCH', body: { name: 'Renamed', description: 'new text' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: p.id, name: 'Renamed', description: 'new text', created_at: p.created_at });
    expect(patched.body.updated_at > p.updated_at).toBe(true);
    const partial = await request(api(`/projects/${p.id}`), { token, method: 'PATCH', body: { description: 'only this' } });
    expect(partial.body).toMatchObject({ name: 'Renamed', description: 'only this' });
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(101) }, { description: 'x'.repeat(2_001) }, { template: 'node-cli' }]) {
      const bad = await request(api(`/projects/${p.id}`), { token, method: 'PATCH', body });
      expect(bad.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(bad.body.code).toBe('validation_failed');
    }

    const withFiles = (await create({ name: 'from template', template: 'fastify-api' })).body;
    expect(withFiles.files_count).toBeGreaterThan(0);
    const del = await request(api(`/projects/${withFiles.id}`), { token, method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true });
    expect((await request(api(`/projects/${withFiles.id}`), { token })).status).toBe(404);
    expect((await request(api(`/projects/${withFiles.id}/files`), { token })).status).toBe(404);
    expect((await request(api(`/projects/${withFiles.id}/files/package.json`), { token })).status).toBe(404);
    // The rows are gone, not just hidden.
    expect((await t.server.ctx.store.projects.listFiles(withFiles.id, 1, 100)).total).toBe(0);
    expect((await request(api(`/projects/${withFiles.id}`), { token, method: 'DELETE' })).status).toBe(404);
  });

  it('validates the create body', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, '/name'], [{ name: '' }, '/name'], [{ name: '   ' }, '/name'], [{ name: 'x'.repeat(101) }, '/name'],
      [{ name: 'ok', description: 'x'.repeat(2_001) }, '/description'], [{ name: 42 }, '/name'],
    ];
    for (const [body, path] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect((await create({ name: 'x'.repeat(100), description: 'y'.repeat(2_000) })).status).toBe(201);
  });

  it('paginates newest first and refuses bad page/limit with 400 validation_failed', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create({ name: `p${i}` })).body.id);
    const first = await request(api('/projects?limit=2'), { token });
    expect(first.body.pagination).toEqual({ page: 1, limit: 2, total: 5, total_pages: 3 });
    expect(first.body.data.map((p: { id: string }) => p.id)).toEqual([ids[4], ids[3]]);
    const last = await request(api('/projects?page=3&limit=2'), { token });
    expect(last.body.data.map((p: { id: string }) => p.id)).toEqual([ids[0]]);
    const past = await request(api('/projects?page=9&limit=2'), { token });
    expect(past.status).toBe(200);
    expect(past.body).toEqual({ data: [], pagination: { page: 9, limit: 2, total: 5, total_pages: 3 } });
    const all = await request(api('/projects?limit=100'), { token });
    expect(all.body.pagination).toEqual({ page: 1, limit: 100, total: 5, total_pages: 1 });
    expect((await request(api('/projects'), { token })).body.pagination).toEqual({ page: 1, limit: 20, total: 5, total_pages: 1 });
    for (const q of ['page=0', 'page=-1', 'limit=0', 'limit=101', 'page=1.5', 'limit=2.5', 'page=abc', 'limit=ten', 'page=']) {
      const res = await request(api(`/projects?${q}`), { token });
      expect(res.status, q).toBe(400);
      expect(res.body.code, q).toBe('validation_failed');
      expect(res.body.errors[0].path, q).toMatch(/page|limit/);
    }
    // A new account starts empty.
    const other = await registerUser(t.url, { ip: nextIp() });
    expect((await request(api('/projects'), { token: other.token })).body).toEqual({ data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } });
  });

  it('lists at least six templates; a project from each starts with its files', async () => {
    const list = await request(api('/templates'), { token });
    expect(list.status).toBe(200);
    const templates = list.body.data as Array<{ id: string; name: string; description: string; language: string; files: string[] }>;
    expect(templates.length).toBeGreaterThanOrEqual(6);
    for (const tpl of templates) {
      expect(tpl).toMatchObject({ id: expect.any(String), name: expect.any(String), description: expect.any(String), language: expect.any(String) });
      const p = (await create({ name: tpl.name, template: tpl.id })).body;
      expect(p).toMatchObject({ template: tpl.id, files_count: tpl.files.length });
      const files = await request(api(`/projects/${p.id}/files?limit=100`), { token });
      expect(files.status).toBe(200);
      expect(files.body.pagination.total).toBe(tpl.files.length);
      expect(files.body.data.map((f: { path: string }) => f.path).sort()).toEqual([...tpl.files].sort());
      for (const f of files.body.data) expect(f).toEqual({ path: expect.any(String), size: expect.any(Number), updated_at: expect.stringMatching(ISO) });
      const nested = tpl.files.find((f) => f.includes('/'))!;
      expect(nested, `${tpl.id} has a nested file`).toBeDefined();
      const one = await request(api(`/projects/${p.id}/files/${nested}`), { token });
      expect(one.status, `${tpl.id} ${nested}`).toBe(200);
      expect(one.body).toMatchObject({ path: nested, size: Buffer.byteLength(one.body.content) });
      expect(one.body.content.length).toBeGreaterThan(0);
    }
    const first = (await create({ name: 'paged files', template: templates[0]!.id })).body;
    const page = await request(api(`/projects/${first.id}/files?limit=1&page=2`), { token });
    expect(page.body.data).toHaveLength(1);
    expect(page.body.pagination).toMatchObject({ page: 2, limit: 1, total: templates[0]!.files.length });
    expect((await request(api(`/projects/${first.id}/files?limit=0`), { token })).status).toBe(400);
    const missing = await request(api(`/projects/${first.id}/files/src/nope.ts`), { token });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
  });

  it('refuses an unknown template with a 400 that lists the valid ids', async () => {
    const res = await create({ name: 'x', template: 'cobol-mainframe' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors[0].path).toBe('/template');
    for (const id of ['fastify-api', 'express-api', 'node-cli', 'typescript-library', 'python-package', 'rust-cli']) expect(res.body.detail).toContain(id);
    expect((await request(api('/projects'), { token })).body.pagination.total).toBe(0);
  });

  it('generate with project_id saves the files into the project; the same path replaces the content', async () => {
    const p = (await create({ name: 'gen target' })).body;
    fake.script({ reply: 'v1\n\n```typescript src/lib/a.ts\nexport const a = 1;\n```\n\n```typescript src/b.ts\nexport const b = 1;\n```\n' });
    const g1 = await request(api('/generate'), { token, body: { prompt: 'two files', model: 'gpt-test', project_id: p.id } });
    expect(g1.status).toBe(200);
    let project = (await request(api(`/projects/${p.id}`), { token })).body;
    expect(project.files_count).toBe(2);
    expect((await request(api(`/projects/${p.id}/files/src/lib/a.ts`), { token })).body.content).toBe('export const a = 1;\n');
    fake.script({ reply: '```typescript src/lib/a.ts\nexport const a = 2;\n```\n' });
    expect((await request(api('/generate'), { token, body: { prompt: 'again', model: 'gpt-test', project_id: p.id } })).status).toBe(200);
    project = (await request(api(`/projects/${p.id}`), { token })).body;
    expect(project.files_count).toBe(2);
    const a = (await request(api(`/projects/${p.id}/files/src/lib/a.ts`), { token })).body;
    expect(a).toMatchObject({ content: 'export const a = 2;\n', size: 20 });
    expect((await request(api(`/projects/${p.id}/files/src/b.ts`), { token })).body.content).toBe('export const b = 1;\n');
    // The sandbox model too.
    const s = await request(api('/generate'), { token, body: { prompt: 'REST API for notes', model: 'sandbox', project_id: p.id } });
    expect(s.status).toBe(200);
    const got = await request(api(`/projects/${p.id}/files/${s.body.files[0].path}`), { token });
    expect(got.body.content).toBe(s.body.files[0].content);
    // Someone else's project, or none: 404, and nothing is generated into it.
    const stranger = await registerUser(t.url, { ip: nextIp() });
    const foreign = await request(api('/generate'), { token: stranger.token, body: { prompt: 'x', model: 'sandbox', project_id: p.id } });
    expect(foreign.status).toBe(404);
    expect((await request(api('/generate'), { token, body: { prompt: 'x', model: 'sandbox', project_id: 'prj_missing' } })).status).toBe(404);
  });

  it('hides another account\'s project and files behind 404 on every route', async () => {
    const p = (await create({ name: 'mine', template: 'node-cli' })).body;
    const other = (await registerUser(t.url, { ip: nextIp() })).token;
    const probes: Array<[string, string, unknown?]> = [
      ['GET', `/projects/${p.id}`], ['PATCH', `/projects/${p.id}`, { name: 'stolen' }], ['DELETE', `/projects/${p.id}`],
      ['GET', `/projects/${p.id}/files`], ['GET', `/projects/${p.id}/files/package.json`],
    ];
    for (const [method, path, body] of probes) {
      const res = await request(api(path), { token: other, method, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('not_found');
      expect(res.text).not.toContain('mine');
    }
    expect((await request(api('/projects'), { token: other })).body.pagination.total).toBe(0);
    // Sandbox resources are kept apart from production ones of the same account.
    expect((await request(api(`/projects/${p.id}`), { token, headers: { 'x-environment': 'sandbox' } })).status).toBe(404);
    const after = await request(api(`/projects/${p.id}`), { token });
    expect(after.body).toMatchObject({ name: 'mine', files_count: p.files_count });
  });

  it('needs a credential, and write:code to change projects', async () => {
    expect((await request(api('/projects'))).status).toBe(401);
    const key = await request(api('/api-keys'), { token, body: { name: 'ro', scopes: ['read:code'] } });
    expect((await request(api('/projects'), { token: key.body.key })).status).toBe(200);
    const refused = await create({ name: 'x' }, key.body.key);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('insufficient_scope');
  });
});
