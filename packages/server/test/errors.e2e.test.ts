import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ERROR_CODES } from '@codeloom/protocol';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request, type JsonResponse } from './helpers/http.js';
import { awayFromWindowEnd } from './helpers/limit-windows.js';

function expectProblem(res: JsonResponse, status: number, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toEqual({
    type: `/docs/errors#${code}`, title: expect.any(String), status, code,
    detail: expect.any(String), request_id: res.headers.get('x-request-id'),
    ...(res.body?.errors ? { errors: expect.any(Array) } : {}),
  });
  expect(res.body.request_id).toMatch(/\S/);
  expect(res.text).not.toMatch(/\bat .+\.(ts|js):\d+/); // no stack traces
}

function expectRateHeaders(res: JsonResponse) {
  const limit = res.headers.get('x-ratelimit-limit');
  const remaining = res.headers.get('x-ratelimit-remaining');
  const reset = res.headers.get('x-ratelimit-reset');
  expect(limit).toMatch(/^\d+$/);
  expect(remaining).toMatch(/^\d+$/);
  expect(Number(remaining)).toBeLessThanOrEqual(Number(limit));
  const now = Math.floor(Date.now() / 1000);
  expect(Number(reset)).toBeGreaterThanOrEqual(now);
  expect(Number(reset)).toBeLessThanOrEqual(now + 3600);
}

/** [METHOD, path] of every route the server registered, read from Fastify's own route table. */
function routesOf(app: FastifyInstance): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:│ {3}| {4})*)(?:├── |└── )(.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    const path = (stack[depth - 1] ?? '') + m[2]!;
    stack[depth] = path;
    for (const method of m[3]?.split(', ') ?? []) out.push([method, path]);
  }
  return out;
}

describe('errors, headers and operational endpoints', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t.close(); });

  const anon = (path: string, init: Parameters<typeof request>[1] = {}) =>
    request(`${t.url}${path}`, { ...init, headers: { 'x-forwarded-for': nextIp(), ...init.headers } });

  it('unknown routes are 404 not_found problems, under every prefix', async () => {
    for (const path of ['/api/v1/nope', '/v1/nope', '/nope', '/api/v1/api-keys/key_x/extra']) expectProblem(await anon(path), 404, 'not_found');
  });

  it('a known path with the wrong method is 405 with Allow', async () => {
    const del = await anon('/api/v1/auth/login', { method: 'DELETE' });
    expectProblem(del, 405, 'method_not_allowed');
    expect(del.headers.get('allow')).toBe('POST');
    const viaAlias = await anon('/v1/auth/login', { method: 'GET' });
    expectProblem(viaAlias, 405, 'method_not_allowed');
    expect(viaAlias.headers.get('allow')).toBe('POST');
    const put = await anon('/healthz', { method: 'PUT' });
    expectProblem(put, 405, 'method_not_allowed');
    expect(put.headers.get('allow')!.split(', ').sort()).toEqual(['GET', 'HEAD']);
  });

  it('malformed JSON is 400 malformed_json', async () => {
    expectProblem(await anon('/api/v1/auth/login', { method: 'POST', raw: '{"email": "a@b.c", ', headers: { 'content-type': 'application/json' } }), 400, 'malformed_json');
  });

  it.each(['application/json; charset=utf-8', 'application/json;charset=UTF-8'])('accepts a JSON body sent as %s (CONTRACT §1)', async (type) => {
    const res = await anon('/api/v1/auth/login', { method: 'POST', raw: JSON.stringify({ email: 'nobody@example.com', password: 'whatever-pass' }), headers: { 'content-type': type } });
    expectProblem(res, 401, 'invalid_credentials');
  });

  it('a 2 MiB body is 413 payload_too_large', async () => {
    const raw = JSON.stringify({ email: 'a@b.c', password: 'x'.repeat(2 * 1024 * 1024), name: 'Big' });
    expectProblem(await anon('/api/v1/auth/register', { method: 'POST', raw, headers: { 'content-type': 'application/json' } }), 413, 'payload_too_large');
  });

  it('a text/plain body is 415 unsupported_media_type', async () => {
    const res = await anon('/api/v1/auth/login', { method: 'POST', raw: 'email=a@b.c', headers: { 'content-type': 'text/plain' } });
    expectProblem(res, 415, 'unsupported_media_type');
  });

  it('missing and wrong-typed fields are 400 validation_failed with one errors[] path per field', async () => {
    const missing = await anon('/api/v1/auth/register', { body: {} });
    expectProblem(missing, 400, 'validation_failed');
    expect(missing.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['/email', '/name', '/password']);
    const wrong = await anon('/api/v1/auth/register', { body: { email: 5, password: true, name: ['x'] } });
    expectProblem(wrong, 400, 'validation_failed');
    expect([...new Set(wrong.body.errors.map((e: { path: string }) => e.path))].sort()).toEqual(['/email', '/name', '/password']);
    for (const e of wrong.body.errors) expect(e.message).toEqual(expect.any(String));
  });

  it('401 unauthorized without a credential, 401 invalid_token with an unknown one', async () => {
    expectProblem(await anon('/api/v1/user/profile'), 401, 'unauthorized');
    expectProblem(await anon('/api/v1/user/profile', { token: 'cl_live_doesnotexist000000000000000' }), 401, 'invalid_token');
    expectProblem(await anon('/api/v1/user/profile', { headers: { authorization: 'Basic dXNlcjpwYXNz' } }), 401, 'invalid_token');
  });

  it('every response carries X-Request-Id; a safe caller id is echoed, an unsafe one replaced', async () => {
    for (const path of ['/healthz', '/nope', '/api/v1/user/profile']) expect((await anon(path)).headers.get('x-request-id')).toMatch(/^req_[\w-]+$/);
    const echoed = await anon('/nope', { headers: { 'x-request-id': 'trace-42.abc:DEF_9' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-42.abc:DEF_9');
    expect(echoed.body.request_id).toBe('trace-42.abc:DEF_9');
    for (const unsafe of ['has spaces in it', 'a'.repeat(300), '<script>']) {
      const res = await anon('/nope', { headers: { 'x-request-id': unsafe } });
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
    }
  });

  it('X-RateLimit-Limit/Remaining/Reset are on every response, 404s and 401s included', async () => {
    await awayFromWindowEnd(2); // keep the three counted requests inside one minute window
    const ip = nextIp();
    const h = { 'x-forwarded-for': ip };
    const responses = [
      await request(`${t.url}/api/v1/nope`, { headers: h }),
      await request(`${t.url}/api/v1/user/profile`, { headers: h }),
      await request(`${t.url}/api/v1/auth/login`, { body: {}, headers: h }),
      await request(`${t.url}/healthz`, { headers: h }),
    ];
    responses.forEach(expectRateHeaders);
    expect(responses[0]!.headers.get('x-ratelimit-limit')).toBe('100');
    const remaining = responses.slice(0, 3).map((r) => Number(r.headers.get('x-ratelimit-remaining')));
    expect(remaining).toEqual([99, 98, 97]);
    const u = await registerUser(t.url, { ip: nextIp() });
    const signedIn = await request(`${t.url}/api/v1/user/profile`, { token: u.token });
    expectRateHeaders(signedIn);
    expect(signedIn.headers.get('x-ratelimit-remaining')).toBe('99');
  });

  it('/v1/… and /api/v1/… serve the same resource', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    const a = await request(`${t.url}/v1/user/profile`, { token: u.token });
    const b = await request(`${t.url}/api/v1/user/profile`, { token: u.token });
    expect(a.status).toBe(200);
    expect(a.body).toEqual(b.body);
    const v = await request(`${t.url}/v1/auth/verify`, { token: u.token });
    expect(v.body.user.id).toBe(u.user.id);
  });

  it('/healthz, /readyz and /metrics answer', async () => {
    const health = await anon('/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    const ready = await anon('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', checks: { database: 'ok' } });
    const metrics = await anon('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(metrics.text).toContain('# TYPE codeloom_http_requests_total counter');
    expect(metrics.text).toMatch(/codeloom_http_requests_total\{[^}]*route="\/healthz"[^}]*\} \d+/);
  });

  it('/openapi.json is OpenAPI 3.1 with a path for every /api/v1 route of the server', async () => {
    const doc = await anon('/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\.1\.\d+$/);
    // /docs shows info.version: the release, as the packages say (it said 1.0.0 while they were 0.1.0).
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(doc.body.info.version).toBe(pkg.version);
    const routes = routesOf(t.server.app).filter(([m, p]) => p.startsWith('/api/v1/') && m !== 'HEAD');
    expect(routes).toContainEqual(['DELETE', '/api/v1/api-keys/:id']);
    expect(routes.length).toBeGreaterThanOrEqual(8);
    const missing = routes
      .map(([m, p]) => [m, p.replace(/:(\w+)/g, '{$1}').replace(/\*$/, '/{path}').replace('//{path}', '/{path}')] as const)
      .filter(([m, p]) => !doc.body.paths[p]?.[m.toLowerCase()])
      .map(([m, p]) => `${m} ${p}`);
    expect(missing).toEqual([]);
    // The routes that call a model name request_too_large (a 400 no wait fixes) beside rate_limited.
    const generate = doc.body.paths['/api/v1/generate'].post;
    expect(generate.responses['400'].description).toMatch(/`request_too_large`/);
    expect(generate.responses['429'].description).toMatch(/`rate_limited`/);
    expect(doc.body.paths['/openai/v1/chat/completions'].post.responses['400'].description).toMatch(/`request_too_large`/);
  });

  it('/docs is an HTML page; /docs/errors has an anchor for every error code', async () => {
    const docs = await anon('/docs');
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
    expect(docs.text).toMatch(/<html/i);
    const errors = await anon('/docs/errors');
    expect(errors.status).toBe(200);
    expect(errors.headers.get('content-type')).toMatch(/^text\/html/);
    for (const code of Object.keys(ERROR_CODES)) expect(errors.text, code).toContain(`id="${code}"`);
    for (const code of ['validation_failed', 'malformed_json', 'unauthorized', 'invalid_token', 'token_expired', 'invalid_credentials', 'insufficient_scope', 'not_found', 'conflict', 'payload_too_large', 'unsupported_media_type', 'rate_limited', 'internal_error', 'upstream_error', 'service_unavailable', 'upstream_timeout']) {
      expect(errors.text, code).toContain(`id="${code}"`);
    }
  });
});
