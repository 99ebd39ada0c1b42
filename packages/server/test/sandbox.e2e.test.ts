import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { awayFromWindowEnd } from './helpers/limit-windows.js';

const SANDBOX = { 'x-environment': 'sandbox' };

describe('the sandbox environment', () => {
  let fake: FakeVendor;
  let t: TestServer;
  beforeAll(async () => {
    fake = await startOpenAIFake({ record: true });
    fake.script({ reply: '```ts a.ts\nexport {};\n```\n', usage: { promptTokens: 10, completionTokens: 19_990 } });
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'k', CODELOOM_OPENAI_MODELS: 'gpt-test' } });
  });
  afterAll(async () => { await t.close(); await fake.close(); });

  const api = (path: string, token: string, init: { body?: unknown; method?: string; headers?: Record<string, string> } = {}) =>
    request(`${t.url}/api/v1${path}`, { token, ...init });

  it('keeps every resource apart, in both directions', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    const make = async (headers: Record<string, string>) => {
      const project = await api('/projects', u.token, { body: { name: 'p' }, headers });
      const agent = await api('/agents', u.token, { body: { name: 'a', model: 'sandbox' }, headers });
      const workflow = await api('/agents/create', u.token, { body: { name: 'w', agents: [{ type: 'coder', model: 'sandbox' }] }, headers });
      const run = await api(`/workflows/${workflow.body.id}/execute`, u.token, { body: { task: 'todo api' }, headers });
      const generation = await api('/generate', u.token, { body: { prompt: 'todo api', model: 'sandbox' }, headers });
      const key = await api('/api-keys', u.token, { body: { name: 'k' }, headers });
      for (const r of [project, agent, workflow, generation, key]) expect(r.status).toBeLessThan(300);
      expect(run.status).toBe(202);
      return { projects: project.body.id, agents: agent.body.id, workflows: workflow.body.id, runs: run.body.id, generations: generation.body.id, 'api-keys': key.body.id };
    };
    const prod = await make({});
    const sand = await make(SANDBOX);
    for (const [env, mine, theirs, headers] of [['production', prod, sand, {}], ['sandbox', sand, prod, SANDBOX]] as const) {
      for (const kind of ['projects', 'agents', 'workflows', 'runs', 'generations'] as const) {
        expect((await api(`/${kind}/${mine[kind]}`, u.token, { headers })).status, `${env} ${kind} own`).toBe(200);
        expect((await api(`/${kind}/${theirs[kind]}`, u.token, { headers })).status, `${env} ${kind} other env`).toBe(404);
        const list = await api(`/${kind}`, u.token, { headers });
        expect(list.body.data.map((x: { id: string }) => x.id), `${env} ${kind} list`).toEqual([mine[kind]]);
      }
      const keys = await api('/api-keys', u.token, { headers });
      expect(keys.body.data.map((k: { id: string }) => k.id)).toEqual([mine['api-keys']]);
      expect((await api(`/api-keys/${theirs['api-keys']}`, u.token, { method: 'DELETE', headers })).status).toBe(404);
    }
  });

  it('always generates with the sandbox model and spends none of the token quota', async () => {
    await awayFromWindowEnd();
    const u = await registerUser(t.url, { ip: nextIp() });
    const before = fake.requests.length;
    const r = await api('/generate', u.token, { body: { prompt: 'REST API for todos', model: 'gpt-test' }, headers: SANDBOX });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe('sandbox');
    expect(fake.requests.length).toBe(before);
    // The production budget is untouched: a production generation that uses 20,000 tokens still fits.
    const prod = await api('/generate', u.token, { body: { prompt: 'x', model: 'gpt-test' } });
    expect(prod.status).toBe(200);
    // …and the sandbox keeps working after production spent its budget.
    expect((await api('/generate', u.token, { body: { prompt: 'y', model: 'gpt-test' } })).status).toBe(429);
    expect((await api('/generate', u.token, { body: { prompt: 'y' }, headers: SANDBOX })).status).toBe(200);
  });

  it('answers prompts whose subject names a JavaScript object property (constructor) like any other', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    for (const prompt of ['a CLI to manage constructor', 'an API for constructors', 'a library of hasOwnProperty']) {
      const r = await api('/generate', u.token, { body: { prompt }, headers: SANDBOX });
      expect(r.status, prompt).toBe(200);
      expect(r.body.files.length).toBeGreaterThan(0);
    }
  });

  it('cl_test_ keys work in the sandbox only; with X-Environment: production they are refused with 403', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    const key = await api('/api-keys', u.token, { body: { name: 'test', environment: 'sandbox' } });
    expect(key.body.key).toMatch(/^cl_test_/);
    const verify = await request(`${t.url}/api/v1/auth/verify`, { token: key.body.key });
    expect(verify.body.credential).toMatchObject({ type: 'api_key', environment: 'sandbox' });
    const profile = await request(`${t.url}/v1/user/profile`, { token: key.body.key });
    expect(profile.body.environment).toBe('sandbox');
    const refused = await request(`${t.url}/v1/user/profile`, { token: key.body.key, headers: { 'x-environment': 'production' } });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('forbidden');
    const gen = await api('/generate', key.body.key, { body: { prompt: 'cli for notes', model: 'gpt-test' } });
    expect(gen.body.model).toBe('sandbox');
  });

  it('counts sandbox requests apart from production ones', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    const prod = await request(`${t.url}/v1/user/profile`, { token: u.token });
    const sand = await request(`${t.url}/v1/user/profile`, { token: u.token, headers: SANDBOX });
    expect(Number(sand.headers.get('x-ratelimit-remaining'))).toBe(99);
    expect(Number(prod.headers.get('x-ratelimit-remaining'))).toBe(99);
    expect(sand.body.environment).toBe('sandbox');
  });

  it('rejects an unknown X-Environment value with 400', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    const r = await request(`${t.url}/v1/user/profile`, { token: u.token, headers: { 'x-environment': 'staging' } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
  });

  it('the WebSocket channel honours the sandbox too', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    const ws = new WebSocket(`${t.url.replace('http', 'ws')}/api/v1/stream`, { headers: { authorization: `Bearer ${u.token}`, 'x-environment': 'sandbox' } });
    const frames: any[] = [];
    await new Promise<void>((resolve, reject) => {
      ws.on('message', (raw) => {
        const f = JSON.parse(String(raw));
        frames.push(f);
        if (f.event === 'connected') ws.send(JSON.stringify({ type: 'generate', id: 'g', prompt: 'todo api', model: 'gpt-test' }));
        if (f.event === 'complete' || f.event === 'error') resolve();
      });
      ws.on('error', reject);
    });
    ws.close();
    expect(frames.at(-1)).toMatchObject({ event: 'complete', data: { model: 'sandbox' } });
    const history = await api('/generations', u.token, { headers: SANDBOX });
    expect(history.body.pagination.total).toBe(1);
  });
});
describe('sandbox selection where a browser cannot set headers', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t.close(); });

  const generateOver = (url: string, first: object | null) => new Promise<any>((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on('open', () => { if (first) ws.send(JSON.stringify(first)); });
    ws.on('message', (raw) => {
      const f = JSON.parse(String(raw));
      if (f.event === 'connected') ws.send(JSON.stringify({ type: 'generate', id: 'g', prompt: 'todo api', max_tokens: 20 }));
      if (f.event === 'complete' || f.event === 'error') { ws.close(); resolve(f); }
    });
    ws.on('error', reject);
  });

  it('takes the environment from the auth frame or from ?environment= on the URL', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    const base = `${t.url.replace('http', 'ws')}/api/v1/stream`;
    await generateOver(base, { type: 'auth', token: u.token, environment: 'sandbox' });
    await generateOver(`${base}?environment=sandbox`, { type: 'auth', token: u.token });
    const sandboxHistory = await request(`${t.url}/api/v1/generations`, { token: u.token, headers: SANDBOX });
    expect(sandboxHistory.body.pagination.total).toBe(2);
    const production = await request(`${t.url}/api/v1/generations`, { token: u.token });
    expect(production.body.pagination.total).toBe(0);
  });
});
