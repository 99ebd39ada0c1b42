/**
 * The OpenAPI document says what the server really answers (issue 24 item 5): real responses of a tour of
 * the API — successes, problem documents, streams, the OpenAI-compatible routes — are checked against
 * /openapi.json: the status is declared for the operation, the response's media type is one the document
 * lists for it (`application/problem+json` for problem documents, `text/event-stream` for streams), and a
 * JSON body validates against the declared schema (JSON Schema 2020-12, as OpenAPI 3.1 uses). The wildcard
 * file route is a `{path}` parameter a generated client can fill, slashes encoded or not.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser } from './helpers/http.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('real responses match the OpenAPI document', () => {
  let t: TestServer;
  let doc: Json;
  let token: string;
  let orgId: string;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  const checked = new Set<string>();

  beforeAll(async () => {
    t = await startTestServer();
    doc = await (await fetch(`${t.url}/openapi.json`)).json();
    // The document's components, reachable as "openapi#/components/…" from each schema checked.
    ajv.addSchema({ $id: 'openapi', components: doc.components ?? {} });
    const user = await registerUser(t.url, { ip: nextIp() });
    token = user.token;
  });
  afterAll(async () => { await t?.close(); });

  /** The operation of `template` (an OpenAPI path) and `method`; fails when the document lacks it. */
  const operation = (method: string, template: string): Json => {
    const op = doc.paths?.[template]?.[method.toLowerCase()];
    expect(op, `${method} ${template} is in the document`).toBeDefined();
    return op;
  };

  /** Sends the request and checks its answer against the document; returns the answer (body parsed when JSON). */
  async function call(method: string, template: string, path: string, init: { body?: unknown; auth?: boolean; headers?: Record<string, string> } = {}) {
    const res = await fetch(`${t.url}${path}`, {
      method,
      headers: { ...(init.auth === false ? {} : { authorization: `Bearer ${token}` }), ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    const text = await res.text();
    const op = operation(method, template);
    const declared = op.responses?.[String(res.status)] ?? op.responses?.default;
    expect(declared, `${method} ${path} → ${res.status} is declared (${Object.keys(op.responses ?? {}).join(', ')})`).toBeDefined();
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    if (res.status === 204 || text === '') {
      checked.add(`${method} ${template} ${res.status}`);
      return { status: res.status, headers: res.headers, body: undefined as Json | undefined, text };
    }
    const content = declared.content ?? {};
    expect(Object.keys(content), `${method} ${path} → ${res.status} answers ${type}`).toContain(type);
    let body: Json | undefined;
    if (type.endsWith('json')) {
      body = JSON.parse(text);
      const schema = JSON.parse(JSON.stringify(content[type].schema ?? {}).replaceAll('"$ref":"#/', '"$ref":"openapi#/'));
      const validate = ajv.compile(schema);
      expect(validate(body), `${method} ${path} → ${res.status}: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 400)}`).toBe(true);
    }
    checked.add(`${method} ${template} ${res.status}`);
    return { status: res.status, headers: res.headers, body, text };
  }

  it('accounts, keys, budgets, usage: successes and problem documents', async () => {
    const profile = await call('GET', '/api/v1/user/profile', '/api/v1/user/profile');
    orgId = profile.body!.organization.id;
    expect((await call('GET', '/api/v1/user/profile', '/api/v1/user/profile', { auth: false })).status).toBe(401);
    const key = await call('POST', '/api/v1/api-keys', '/api/v1/api-keys', { body: { name: 'doc' } });
    expect(key.status).toBe(201);
    await call('GET', '/api/v1/api-keys', '/api/v1/api-keys');
    expect((await call('POST', '/api/v1/api-keys', '/api/v1/api-keys', { body: { name: '' } })).status).toBe(400);
    const budget = await call('POST', '/api/v1/budgets', '/api/v1/budgets', { body: { scope: { type: 'organization', id: orgId }, amount_usd: 5, period: 'month' } });
    expect(budget.status).toBe(201);
    await call('GET', '/api/v1/budgets', '/api/v1/budgets');
    await call('GET', '/api/v1/budgets/{id}', `/api/v1/budgets/${budget.body!.id}`);
    await call('PATCH', '/api/v1/budgets/{id}', `/api/v1/budgets/${budget.body!.id}`, { body: { amount_usd: 6 } });
    expect((await call('GET', '/api/v1/budgets/{id}', '/api/v1/budgets/bud_nope')).status).toBe(404);
    await call('DELETE', '/api/v1/budgets/{id}', `/api/v1/budgets/${budget.body!.id}`);
    await call('GET', '/api/v1/usage', '/api/v1/usage');
    expect((await call('GET', '/api/v1/usage', '/api/v1/usage?from=yesterday')).status).toBe(400);
  });

  it('generation as JSON and as a stream, and its history', async () => {
    const json = await call('POST', '/api/v1/generate', '/api/v1/generate', { body: { prompt: 'a todo API', model: 'sandbox' } });
    expect(json.status).toBe(200);
    const stream = await call('POST', '/api/v1/generate', '/api/v1/generate', { body: { prompt: 'a todo API', model: 'sandbox', stream: true } });
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.text).toContain('event: complete');
    await call('GET', '/api/v1/generations', '/api/v1/generations');
    await call('GET', '/api/v1/generations/{id}', `/api/v1/generations/${json.body!.id}`);
    expect((await call('POST', '/api/v1/generate', '/api/v1/generate', { body: { prompt: '' } })).status).toBe(400);
  });

  it('projects and the {path} of a file, slashes encoded or not', async () => {
    const project = await call('POST', '/api/v1/projects', '/api/v1/projects', { body: { name: 'doc', template: 'express-api' } });
    expect(project.status, project.text).toBe(201);
    const files = await call('GET', '/api/v1/projects/{id}/files', `/api/v1/projects/${project.body!.id}/files`);
    const nested = (files.body!.data ?? files.body!.files ?? files.body).map((f: Json) => f.path).find((p: string) => p.includes('/'));
    expect(nested, 'the template has a file in a folder').toBeDefined();
    for (const path of [nested, encodeURIComponent(nested)]) {
      const file = await call('GET', '/api/v1/projects/{id}/files/{path}', `/api/v1/projects/${project.body!.id}/files/${path}`);
      expect(file.status, path).toBe(200);
    }
    expect((await call('GET', '/api/v1/projects/{id}/files/{path}', `/api/v1/projects/${project.body!.id}/files/no%2Fsuch.js`)).status).toBe(404);
    const param = operation('GET', '/api/v1/projects/{id}/files/{path}').parameters.find((p: Json) => p.in === 'path' && p.name === 'path');
    expect(param).toMatchObject({ required: true });
    expect(Object.keys(doc.paths).some((p) => p.includes('{*}'))).toBe(false);
  });

  it('project file writes, revisions, restore and zip downloads', async () => {
    const id = (await call('POST', '/api/v1/projects', '/api/v1/projects', { body: { name: 'history' } })).body!.id;
    const file = '/api/v1/projects/{id}/files/{path}';
    expect((await call('PUT', file, `/api/v1/projects/${id}/files/src%2Fa.ts`, { body: { content: 'a\n' } })).status).toBe(201);
    expect((await call('PUT', file, `/api/v1/projects/${id}/files/src/a.ts`, { body: { content: 'a\n' } })).status).toBe(200);
    expect((await call('PUT', file, `/api/v1/projects/${id}/files/a//b`, { body: { content: 'x' } })).status).toBe(400);
    expect((await call('DELETE', file, `/api/v1/projects/${id}/files/src/a.ts`)).status).toBe(200);
    expect((await call('DELETE', file, `/api/v1/projects/${id}/files/src/a.ts`)).status).toBe(404);
    expect((await call('GET', '/api/v1/projects/{id}/revisions', `/api/v1/projects/${id}/revisions`)).body!.data).toHaveLength(3);
    expect((await call('GET', '/api/v1/projects/{id}/revisions/{rev}', `/api/v1/projects/${id}/revisions/2`)).body!.files).toHaveLength(1);
    expect((await call('GET', '/api/v1/projects/{id}/revisions/{rev}', `/api/v1/projects/${id}/revisions/0`)).status).toBe(400);
    expect((await call('GET', '/api/v1/projects/{id}/revisions/{rev}', `/api/v1/projects/${id}/revisions/9`)).status).toBe(404);
    expect((await call('POST', '/api/v1/projects/{id}/revisions/{rev}/restore', `/api/v1/projects/${id}/revisions/2/restore`)).status).toBe(201);
    expect((await call('POST', '/api/v1/projects/{id}/revisions/{rev}/restore', `/api/v1/projects/${id}/revisions/2/restore`)).status).toBe(200);
    const zip = await call('GET', '/api/v1/projects/{id}/revisions/{rev}/archive', `/api/v1/projects/${id}/revisions/2/archive`);
    expect(zip.headers.get('content-type')).toBe('application/zip');
    expect((await call('GET', '/api/v1/projects/{id}/archive', `/api/v1/projects/${id}/archive`)).status).toBe(200);
  });

  it('the OpenAI-compatible routes keep OpenAI\'s JSON errors; their streams are declared', async () => {
    await call('GET', '/openai/v1/models', '/openai/v1/models');
    await call('GET', '/openai/v1/models/{model}', '/openai/v1/models/sandbox');
    expect((await call('GET', '/openai/v1/models/{model}', '/openai/v1/models/nope')).status).toBe(404);
    await call('POST', '/openai/v1/chat/completions', '/openai/v1/chat/completions', { body: { model: 'sandbox', messages: [{ role: 'user', content: 'a todo API' }] } });
    const stream = await call('POST', '/openai/v1/chat/completions', '/openai/v1/chat/completions', { body: { model: 'sandbox', stream: true, messages: [{ role: 'user', content: 'a todo API' }] } });
    expect(stream.text).toContain('data: [DONE]');
    const bad = await call('POST', '/openai/v1/chat/completions', '/openai/v1/chat/completions', { body: { model: 'sandbox', messages: [] } });
    expect(bad.status).toBe(400);
    expect(bad.body!.error.type).toBe('invalid_request_error');
  });

  it('the Responses API routes: the response object, its stream, the deleted object and OpenAI\'s errors are as declared', async () => {
    const created = await call('POST', '/openai/v1/responses', '/openai/v1/responses', { body: { model: 'sandbox', input: 'a todo API' } });
    expect(created.status).toBe(200);
    const stream = await call('POST', '/openai/v1/responses', '/openai/v1/responses', { body: { model: 'sandbox', input: 'a todo API', stream: true } });
    expect(stream.text).toContain('event: response.completed');
    await call('GET', '/openai/v1/responses/{id}', `/openai/v1/responses/${created.body!.id}`);
    await call('DELETE', '/openai/v1/responses/{id}', `/openai/v1/responses/${created.body!.id}`);
    expect((await call('GET', '/openai/v1/responses/{id}', `/openai/v1/responses/${created.body!.id}`)).status).toBe(404);
    expect((await call('POST', '/openai/v1/responses', '/openai/v1/responses', { body: { model: 'sandbox', input: 7 } })).status).toBe(400);
  });

  it('the Anthropic-compatible routes keep Anthropic\'s JSON errors; their stream is declared', async () => {
    const ask = { model: 'sandbox', max_tokens: 200, messages: [{ role: 'user', content: 'a todo API' }] };
    await call('POST', '/anthropic/v1/messages', '/anthropic/v1/messages', { body: ask });
    const stream = await call('POST', '/anthropic/v1/messages', '/anthropic/v1/messages', { body: { ...ask, stream: true } });
    expect(stream.text).toContain('event: message_stop');
    const bad = await call('POST', '/anthropic/v1/messages', '/anthropic/v1/messages', { body: { model: 'sandbox', messages: [] } });
    expect(bad.status).toBe(400);
    expect(bad.body!.error.type).toBe('invalid_request_error');
    expect((await call('POST', '/anthropic/v1/messages', '/anthropic/v1/messages', { body: ask, auth: false })).status).toBe(401);
    await call('POST', '/anthropic/v1/messages/count_tokens', '/anthropic/v1/messages/count_tokens', { body: { model: 'sandbox', messages: ask.messages } });
    await call('GET', '/anthropic/v1/models', '/anthropic/v1/models?limit=1');
    await call('GET', '/anthropic/v1/models/{model_id}', '/anthropic/v1/models/sandbox');
    expect((await call('GET', '/anthropic/v1/models/{model_id}', '/anthropic/v1/models/nope')).status).toBe(404);
  });

  it('every problem document of /api/v1 is declared as application/problem+json', () => {
    for (const [path, item] of Object.entries(doc.paths) as Array<[string, Json]>) {
      if (!path.startsWith('/api/v1')) continue;
      for (const op of Object.values(item) as Json[]) {
        for (const [status, response] of Object.entries(op.responses ?? {}) as Array<[string, Json]>) {
          if (Number(status) >= 400 && response.content) expect(Object.keys(response.content), `${path} ${status}`).toEqual(['application/problem+json']);
        }
      }
    }
    expect(checked.size).toBeGreaterThan(25);
  });
});
