import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '@codeloom/protocol';
import { nextIp, startTestServer, TEST_DATABASE_URL, type TestServer } from './helpers/test-server.js';
import { registerUser, request, type JsonResponse } from './helpers/http.js';
import { bye, connect } from './helpers/ws-client.js';

/** The concrete bad inputs of issue 12, each a 4xx problem document (never a 500), on both dialects. */
function expectProblem(res: JsonResponse, status: number, code: string, path?: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body.code).toBe(code);
  expect(ERROR_CODES[code as keyof typeof ERROR_CODES].status).toBe(status);
  expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
  if (path) expect(res.body.errors?.map((e: { path: string }) => e.path)).toContain(path);
}

function badInputSuite(dialect: 'sqlite' | 'postgres') {
  let t: TestServer;
  let token: string;
  let projectId: string;
  let agentId: string;
  beforeAll(async () => {
    t = await startTestServer({ dialect });
    const user = await registerUser(t.url, { ip: nextIp() });
    await t.server.ctx.store.accounts.setPlanByEmail(user.email.toLowerCase(), 'enterprise'); // no per-minute limit: the tests send a few hundred requests
    token = user.token;
    projectId = (await request(`${t.url}/api/v1/projects`, { token, body: { name: 'p' } })).body.id;
    agentId = (await request(`${t.url}/api/v1/agents`, { token, body: { name: 'a', model: 'sandbox' } })).body.id;
  });
  afterAll(async () => { await t?.close(); });

  const as = (path: string, init: Parameters<typeof request>[1] = {}) =>
    request(`${t.url}${path}`, { token, ...init, headers: { 'x-forwarded-for': nextIp(), ...init.headers } });
  const anon = (path: string, init: Parameters<typeof request>[1] = {}) =>
    request(`${t.url}${path}`, { ...init, headers: { 'x-forwarded-for': nextIp(), ...init.headers } });

  it('NUL in any text field is 400 validation_failed naming the field', async () => {
    const cases: Array<[string, string, unknown, string, boolean]> = [
      ['POST', '/api/v1/auth/register', { email: 'nul\u0000@example.com', password: 'correct horse battery', name: 'N' }, '/email', false],
      ['POST', '/api/v1/auth/register', { email: 'nul@example.com', password: 'correct horse\u0000', name: 'N' }, '/password', false],
      ['POST', '/api/v1/auth/register', { email: 'nul@example.com', password: 'correct horse battery', name: 'N\u0000' }, '/name', false],
      ['POST', '/api/v1/auth/login', { email: 'a\u0000@example.com', password: 'whatever-pass' }, '/email', false],
      ['POST', '/api/v1/projects', { name: 'p\u0000' }, '/name', true],
      ['POST', '/api/v1/projects', { name: 'p', description: 'multi\nline\u0000' }, '/description', true],
      ['PATCH', `/api/v1/projects/${projectId}`, { name: '\u0000' }, '/name', true],
      ['POST', '/api/v1/api-keys', { name: 'k\u0000' }, '/name', true],
      ['POST', '/api/v1/agents', { name: 'a\u0000', model: 'sandbox' }, '/name', true],
      ['POST', '/api/v1/agents/create', { name: 'w\u0000', agents: [{ type: 'coder' }] }, '/name', true],
      ['POST', '/api/v1/oauth/clients', { name: 'c\u0000', redirect_uris: ['https://app.example/cb'], scopes: ['read:code'] }, '/name', true],
      ['POST', '/api/v1/generate', { prompt: 'hello\u0000world' }, '/prompt', true],
      ['POST', '/api/v1/generate', { prompt: 'hello', context: { framework: 'x\u0000' } }, '/context/framework', true],
      ['POST', `/api/v1/agents/${agentId}/execute`, { task: 'task\u0000' }, '/task', true],
    ];
    for (const [method, path, body, field, authed] of cases) {
      const res = await (authed ? as : anon)(path, { method, body });
      expectProblem(res, 400, 'validation_failed', field);
    }
  });

  it('control characters other than tab and newline are refused in names, emails and ids; descriptions keep newlines', async () => {
    expectProblem(await anon('/api/v1/auth/register', { body: { email: 'ctl\u0007@example.com', password: 'correct horse battery', name: 'C' } }), 400, 'validation_failed', '/email');
    expectProblem(await as('/api/v1/projects', { body: { name: 'line\nbreak' } }), 400, 'validation_failed', '/name');
    expectProblem(await as('/api/v1/projects', { body: { name: 'esc\u001b[31m' } }), 400, 'validation_failed', '/name');
    expectProblem(await as('/api/v1/api-keys', { body: { name: 'del\u007f' } }), 400, 'validation_failed', '/name');
    const ok = await as('/api/v1/projects', { body: { name: 'fine', description: 'two\nlines\tand a tab' } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.description).toBe('two\nlines\tand a tab');
  });

  it('ids in paths with NUL or control characters are 4xx problems, never 500', async () => {
    expectProblem(await as('/api/v1/projects/prj_%00'), 400, 'validation_failed', 'params/id');
    expectProblem(await as('/api/v1/projects/prj_%01'), 400, 'validation_failed', 'params/id');
    for (const path of ['/api/v1/agents/agt_%00', '/api/v1/runs/run_%00', '/api/v1/generations/gen_%00', '/api/v1/oauth/clients/cli_%00', `/api/v1/projects/${projectId}/files/a%00b`]) {
      expectProblem(await as(path), 400, 'validation_failed');
    }
    expectProblem(await as('/api/v1/api-keys/key_%00', { method: 'DELETE' }), 400, 'validation_failed', 'params/id');
    expectProblem(await as('/api/v1/projects/prj_unknown'), 404, 'not_found');
  });

  it('the OAuth metadata document answers a bad query with a problem document; the token endpoint with RFC 6749 invalid_request', async () => {
    expectProblem(await anon('/.well-known/oauth-authorization-server?x=%00'), 400, 'validation_failed', 'querystring/x');
    const token = await anon('/oauth/token', { method: 'POST', raw: 'grant_type=refresh_token&refresh_token=a%00b', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(token.status).toBe(400);
    expect(token.body).toMatchObject({ error: 'invalid_request' });
  });

  it('/oauth/authorize with client_id=cli_%00 answers its 400 error page, not a 500', async () => {
    const res = await anon('/oauth/authorize?client_id=cli_%00&response_type=code');
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('x-request-id')).toMatch(/\S/);
  });

  it('out-of-range page and limit are 400 validation_failed on every list', async () => {
    const lists = ['/api/v1/projects', '/api/v1/generations', '/api/v1/runs', '/api/v1/api-keys', `/api/v1/projects/${projectId}/files`, '/api/v1/agents', '/api/v1/workflows', '/api/v1/oauth/clients'];
    const bad = ['page=99999999999999999999', 'page=1e300', 'page=Infinity', 'page=-Infinity', 'page=NaN', 'page=92233720368547759', 'page=1000001', 'page=0', 'page=-1', 'page=1.5', 'limit=101', 'limit=0', 'limit=1e300', 'limit=Infinity'];
    for (const list of lists) {
      for (const q of bad) {
        const res = await as(`${list}?${q}`);
        expectProblem(res, 400, 'validation_failed', `querystring/${q.split('=')[0]}`);
      }
      const last = await as(`${list}?page=1000000&limit=100`);
      expect(last.status, `${list}: ${last.text}`).toBe(200);
      expect(last.body.data).toEqual([]);
    }
  });

  it('bad percent-encoding is a 400 problem document with X-Request-Id', async () => {
    for (const path of ['/api/v1/projects/%ff', '/api/v1/projects/%', '/api/v1/projects/%zz', '/api/v1/projects/%C0%AE', '/v1/projects/%ff', '/healthz/%ff']) {
      expectProblem(await as(path), 400, 'validation_failed', 'url');
    }
  });

  it('an over-long id is a 400 validation_failed, as the schema says, not a 414', async () => {
    expectProblem(await as(`/api/v1/projects/${'a'.repeat(101)}`), 400, 'validation_failed', 'params/id');
    expectProblem(await as(`/api/v1/projects/${'a'.repeat(600)}`), 400, 'validation_failed');
    expectProblem(await as(`/api/v1/agents/${'a'.repeat(5000)}`, { method: 'DELETE' }), 400, 'validation_failed');
  });

  it('a body over the limit is 413 payload_too_large', async () => {
    expectProblem(await as('/api/v1/projects', { raw: JSON.stringify({ name: 'x', description: 'a'.repeat(2 * 1024 * 1024) }), headers: { 'content-type': 'application/json' } }), 413, 'payload_too_large');
  });

  it('NUL in streaming frames is a validation_failed error frame, never internal_error', async () => {
    const c = await connect(t.url, token);
    c.send({ type: 'subscribe', run_id: 'run_\u0000' });
    c.send({ type: 'generate', id: 'g1', prompt: 'hello\u0000' });
    const errors = [await c.waitFor((f) => f.event === 'error' && f.data?.errors?.[0]?.path === '/run_id'), await c.waitFor((f) => f.event === 'error' && f.id === 'g1')];
    for (const e of errors) expect(e.data.code).toBe('validation_failed');
    expect(errors[1]!.data.errors).toEqual([{ path: '/prompt', message: 'must not contain NUL (U+0000)' }]);
    await bye(c);
  });

  it('the server is healthy afterwards', async () => {
    expect((await anon('/healthz')).status).toBe(200);
    expect((await as(`/api/v1/projects/${projectId}`)).status).toBe(200);
  });
}

describe('bad input (SQLite)', () => badInputSuite('sqlite'));
describe.skipIf(!TEST_DATABASE_URL)('bad input (PostgreSQL)', () => badInputSuite('postgres'));
