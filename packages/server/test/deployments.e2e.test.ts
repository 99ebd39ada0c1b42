import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake, type FakeVendor } from './fakes/openai-fake.js';
import { startEmbeddingsFake } from './fakes/openai-embeddings-fake.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';

/**
 * Model deployments (CONTRACT §12.4, issue 25) on one server with three loopback OpenAI-compatible fakes:
 * administrators only, validation, environment providers as read-only deployments, weighted routing,
 * cooldown and recovery, quota hand-over, the test call, and the API key never in an answer or a log line.
 */
const SECRET = 'sk-deploy-SECRET-7f3a9c';

describe('model deployments', () => {
  let a: FakeVendor, b: FakeVendor, env: FakeVendor;
  let t: TestServer;
  let admin: Awaited<ReturnType<typeof registerUser>>;
  let other: Awaited<ReturnType<typeof registerUser>>;
  const answers: string[] = [];
  const logged: string[] = [];
  const writes = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  const onWarning = (w: Error) => logged.push(`${w.name}: ${w.message}`);

  const api = async (path: string, init: Parameters<typeof request>[1] = {}) => {
    const res = await request(`${t.url}/api/v1/admin${path}`, { token: admin.token, ...init });
    answers.push(res.text);
    return res;
  };
  const chat = async (model: string, token = admin.token) => {
    const res = await request(`${t.url}/openai/v1/chat/completions`, { token, body: { model, messages: [{ role: 'user', content: 'hello there' }], max_tokens: 20 } });
    answers.push(res.text);
    return res;
  };
  const deployment = (name: string, fake: FakeVendor, models: unknown[], extra: Record<string, unknown> = {}) =>
    api('/deployments', { body: { name, provider: 'openai', base_url: `${fake.url}/v1`, models, ...extra } });
  const price = { input: 1, output: 2 };

  beforeAll(async () => {
    // Every line the server logs (pino writes to stdout) and every warning it emits, to look for the secret in.
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => { logged.push(String(chunk)); return (writes.out as any)(chunk, ...rest); }) as typeof process.stdout.write;
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => { logged.push(String(chunk)); return (writes.err as any)(chunk, ...rest); }) as typeof process.stderr.write;
    process.on('warning', onWarning);
    [a, b, env] = await Promise.all([startOpenAIFake({ record: true }), startOpenAIFake({ record: true }), startOpenAIFake({ record: true })]);
    t = await startTestServer({
      env: {
        LOG_LEVEL: 'debug', OPENAI_BASE_URL: `${env.url}/v1`, OPENAI_API_KEY: 'sk-env', CODELOOM_OPENAI_MODELS: 'gpt-env',
        CODELOOM_COOLDOWN_FAILURES: '3', CODELOOM_COOLDOWN_SECONDS: '2', CODELOOM_UPSTREAM_RETRIES: '0', CODELOOM_SECRET_KEY: 'test-secret-key',
      },
    });
    admin = await registerUser(t.url, { ip: '10.25.0.1' });
    other = await registerUser(t.url, { ip: '10.25.0.2' });
    for (const u of [admin, other]) await t.server.ctx.store.accounts.setPlanByEmail(u.email.toLowerCase(), 'enterprise');
  });

  afterAll(async () => {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
    process.off('warning', onWarning);
    await t?.close();
    await Promise.all([a, b, env].map((f) => f?.close()));
  });

  it('admin routes: the first account is an administrator; anyone else gets 403; admin-scope API keys only from administrators', async () => {
    expect((await api('/deployments')).status).toBe(200);
    const denied = await request(`${t.url}/api/v1/admin/deployments`, { token: other.token });
    expect(denied.status).toBe(403);
    // Checked before the body: a non-administrator learns nothing from validation.
    expect((await request(`${t.url}/api/v1/admin/deployments`, { token: other.token, body: { provider: 'nope' } })).status).toBe(403);
    expect((await request(`${t.url}/api/v1/admin/deployments/env-openai/test`, { method: 'POST', token: other.token })).status).toBe(403);
    expect((await request(`${t.url}/api/v1/admin/deployments`)).status).toBe(401);
    // Only an administrator can mint a key with scope admin.
    const refused = await request(`${t.url}/api/v1/api-keys`, { token: other.token, body: { name: 'x', scopes: ['admin'] } });
    expect(refused.status).toBe(403);
    const plainKey = await request(`${t.url}/api/v1/api-keys`, { token: admin.token, body: { name: 'plain' } });
    expect(plainKey.body.scopes).not.toContain('admin');
    expect((await request(`${t.url}/api/v1/admin/deployments`, { token: plainKey.body.key })).status).toBe(403);
    const adminKey = await request(`${t.url}/api/v1/api-keys`, { token: admin.token, body: { name: 'automation', scopes: ['read:code', 'admin'] } });
    expect(adminKey.status).toBe(201);
    expect((await request(`${t.url}/api/v1/admin/deployments`, { token: adminKey.body.key })).status).toBe(200);
    // Revoked administration: the key stops working at once.
    await t.server.ctx.store.accounts.setAdminByEmail(admin.email.toLowerCase(), false);
    expect((await request(`${t.url}/api/v1/admin/deployments`, { token: adminKey.body.key })).status).toBe(403);
    await t.server.ctx.store.accounts.setAdminByEmail(admin.email.toLowerCase(), true);
  });

  it('bad input is a 400 naming the field', async () => {
    const ok = { name: 'x', provider: 'openai', base_url: 'http://127.0.0.1:1/v1', models: [{ id: 'fine', price }] };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...ok, base_url: 'ftp://example.com/v1' }, '/base_url'],
      [{ ...ok, base_url: 'not a url' }, '/base_url'],
      [{ ...ok, models: [] }, '/models'],
      [{ ...ok, models: [{ id: 'fine', price: { input: -1, output: 2 } }] }, '/models/0/price/input'],
      [{ ...ok, provider: 'azure' }, '/provider'],
      [{ ...ok, models: [{ id: 'sandbox', price }] }, '/models/0/id'],
      [{ ...ok, models: [{ id: 'fine', price }, { id: 'gpt-env', price }] }, '/models/1/id'],
      [{ ...ok, weight: -1 }, '/weight'],
    ];
    for (const [body, path] of cases) {
      const res = await api('/deployments', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(res.body.errors), JSON.stringify(body)).toContain(path);
    }
  });

  it('environment providers are read-only deployments (PATCH and DELETE: 409)', async () => {
    const list = await api('/deployments');
    const envDep = list.body.data.find((d: any) => d.id === 'env-openai');
    expect(envDep).toMatchObject({ read_only: true, provider: 'openai', has_api_key: true, models: [{ id: 'gpt-env' }], health: { status: 'ok' } });
    const patch = await api('/deployments/env-openai', { method: 'PATCH', body: { weight: 2 } });
    expect(patch.status).toBe(409);
    expect(patch.body.detail).toMatch(/environment/);
    expect((await api('/deployments/env-openai', { method: 'DELETE' })).status).toBe(409);
    expect((await chat('gpt-env')).status).toBe(200);
  });

  it('routes by weight (1:3 over 400 calls within ±8 %), with each deployment\'s upstream model name and key', async () => {
    a.reset(); b.reset();
    a.script({ requireApiKey: SECRET });
    const da = await deployment('box-a', a, [{ id: 'coder', upstream_model: 'coder-a', price }], { weight: 1, api_key: SECRET });
    expect(da.status).toBe(201);
    expect(da.body).toMatchObject({ has_api_key: true, weight: 1, health: { status: 'ok', consecutive_failures: 0 } });
    expect(da.body.api_key).toBeUndefined();
    const db = await deployment('box-b', b, [{ id: 'coder', upstream_model: 'coder-b', price: { input: 3, output: 6 } }], { weight: 3 });
    expect(db.status).toBe(201);
    // The model is listed at once (no restart).
    const models = await request(`${t.url}/api/v1/models`, { token: admin.token });
    expect(models.body.data?.map((m: any) => m.id) ?? models.body.map((m: any) => m.id)).toContain('coder');
    for (let batch = 0; batch < 20; batch++) {
      const results = await Promise.all(Array.from({ length: 20 }, () => chat('coder')));
      for (const r of results) expect(r.status, r.text).toBe(200);
    }
    expect(a.requests.length + b.requests.length).toBe(400);
    expect(a.requests.length).toBeGreaterThanOrEqual(100 - 32);
    expect(a.requests.length).toBeLessThanOrEqual(100 + 32);
    expect(new Set(a.requests.map((r) => r.body.model))).toEqual(new Set(['coder-a']));
    expect(new Set(b.requests.map((r) => r.body.model))).toEqual(new Set(['coder-b']));
    // The key was stored encrypted, and is sent upstream.
    const row = await t.server.ctx.store.deployments.find(da.body.id);
    expect(row!.apiKeyEnc).not.toContain(SECRET);
    expect(a.requests[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
    // The reservation holds at the dearest deployment's price: the model lists it.
    const listed = (models.body.data ?? models.body).find((m: any) => m.id === 'coder');
    expect(listed.price).toMatchObject({ input: 3, output: 6 });
    await api(`/deployments/${da.body.id}`, { method: 'DELETE' });
    await api(`/deployments/${db.body.id}`, { method: 'DELETE' });
  });

  it('each call is charged at the price of the deployment that served it', async () => {
    a.reset(); b.reset();
    const da = await deployment('cheap', a, [{ id: 'priced', price: { input: 1, output: 2 } }], { weight: 1 });
    const db = await deployment('dear', b, [{ id: 'priced', price: { input: 100, output: 200 } }], { weight: 1 });
    const seen = { cheap: 0, dear: 0 };
    for (let i = 0; i < 20 && (seen.cheap === 0 || seen.dear === 0); i++) {
      const before = a.requests.length;
      const res = await request(`${t.url}/api/v1/generate`, { token: admin.token, body: { prompt: 'hello there', model: 'priced' } });
      answers.push(res.text);
      expect(res.status, res.text).toBe(200);
      const cheap = a.requests.length > before;
      const p = cheap ? { input: 1, output: 2 } : { input: 100, output: 200 };
      const micros = Math.round(res.body.usage.prompt_tokens * p.input + res.body.usage.completion_tokens * p.output);
      expect(res.body.cost_usd).toBe(micros / 1_000_000);
      seen[cheap ? 'cheap' : 'dear']++;
    }
    expect(seen.cheap).toBeGreaterThan(0);
    expect(seen.dear).toBeGreaterThan(0);
    await api(`/deployments/${da.body.id}`, { method: 'DELETE' });
    await api(`/deployments/${db.body.id}`, { method: 'DELETE' });
  });

  it('a deployment failing 3 times in a row cools down (skipped), then is tried again', async () => {
    a.reset(); b.reset();
    a.script({ failNext: { count: 1000, status: 500 } });
    const da = await deployment('flaky', a, [{ id: 'cool', price }], { weight: 1 });
    const db = await deployment('steady', b, [{ id: 'cool', price }], { weight: 1 });
    for (let i = 0; i < 30; i++) expect((await chat('cool')).status).toBe(200); // the failing one hands each call to the other
    expect(a.requests.length).toBe(3);
    const cooling = await api(`/deployments/${da.body.id}`);
    expect(cooling.body.health).toMatchObject({ status: 'cooling_down', consecutive_failures: 3 });
    expect(Date.parse(cooling.body.health.cooldown_until)).toBeGreaterThan(Date.now());
    expect((await api(`/deployments/${db.body.id}`)).body.health).toMatchObject({ status: 'ok', consecutive_failures: 0 });
    const metrics = await request(`${t.url}/metrics`);
    expect(metrics.text).toMatch(new RegExp(`codeloom_deployment_up\\{deployment="${da.body.id}"[^}]*\\} 0`));
    // Recovered upstream; after the cooldown it is tried again and is healthy.
    a.script({ failNext: { count: 0, status: 500 } });
    await new Promise((r) => setTimeout(r, 2100));
    for (let i = 0; i < 30 && a.requests.length === 3; i++) expect((await chat('cool')).status).toBe(200);
    expect(a.requests.length).toBeGreaterThan(3);
    expect((await api(`/deployments/${da.body.id}`)).body.health).toMatchObject({ status: 'ok', consecutive_failures: 0, cooldown_until: null });
    expect((await api(`/deployments/${da.body.id}`)).body.health.latency_ms).toEqual(expect.any(Number));
    // An upstream 400 (upstream_rejected) is the caller's, not the deployment's: no failure counted.
    a.reset(); b.reset();
    await api(`/deployments/${db.body.id}`, { method: 'PATCH', body: { enabled: false } });
    expect((await api(`/deployments/${db.body.id}`)).body.health.status).toBe('disabled');
    a.script({ failNext: { count: 5, status: 400, code: 'context_length_exceeded' } });
    for (let i = 0; i < 5; i++) expect((await chat('cool')).status).toBe(400);
    expect((await api(`/deployments/${da.body.id}`)).body.health).toMatchObject({ status: 'ok', consecutive_failures: 0 });
    expect(b.requests.length).toBe(0); // disabled: never called
    await api(`/deployments/${da.body.id}`, { method: 'DELETE' });
    await api(`/deployments/${db.body.id}`, { method: 'DELETE' });
  });

  it('a deployment at its rpm hands calls to another; all at quota → 429 upstream_rate_limited with Retry-After', async () => {
    // Away from a minute boundary, so every call counts in the same one-minute window.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await new Promise((r) => setTimeout(r, 61_000 - intoMinute));
    a.reset(); b.reset();
    const da = await deployment('small', a, [{ id: 'quota', price }], { weight: 1000, rpm: 2 });
    const db = await deployment('big', b, [{ id: 'quota', price }], { weight: 1, rpm: 3 });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await chat('quota')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(a.requests.length).toBe(2); // its rpm, then the other deployment took over
    expect(b.requests.length).toBe(3);
    const refused = await chat('quota');
    expect(refused.status).toBe(429);
    expect(refused.body.error?.code ?? refused.body.code).toBe('upstream_rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(a.requests.length + b.requests.length).toBe(5); // refused without calling upstream
    await api(`/deployments/${da.body.id}`, { method: 'DELETE' });
    await api(`/deployments/${db.body.id}`, { method: 'DELETE' });
  });

  it('embeddings and fill-in-the-middle through deployments, with the upstream names', async () => {
    const embedFake = await startEmbeddingsFake();
    try {
      const de = await api('/deployments', { body: { name: 'embedder', provider: 'openai', base_url: `${embedFake.url}/v1`, models: [{ id: 'embed', upstream_model: 'embed-up', embeddings: true, price }] } });
      expect(de.status, de.text).toBe(201);
      const res = await request(`${t.url}/openai/v1/embeddings`, { token: admin.token, body: { model: 'embed', input: ['one two three', 'four'] } });
      answers.push(res.text);
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toHaveLength(2);
      expect(embedFake.requests.at(-1)!.body.model).toBe('embed-up');
      await api(`/deployments/${de.body.id}`, { method: 'DELETE' });
    } finally {
      await embedFake.close();
    }
    a.reset();
    const df = await deployment('fim', a, [{ id: 'fim-model', upstream_model: 'fim-up', fim: true, price }]);
    const fim = await request(`${t.url}/openai/v1/completions`, { token: admin.token, body: { model: 'fim-model', prompt: 'def add(a, b):', suffix: '\n\nprint(add(1, 2))', max_tokens: 20 } });
    answers.push(fim.text);
    expect(fim.status, fim.text).toBe(200);
    expect(a.requests.at(-1)!.body).toMatchObject({ model: 'fim-up', suffix: '\n\nprint(add(1, 2))' });
    // A model whose deployment does not mark it fim refuses a suffix (400 naming it).
    const dn = await deployment('plain', a, [{ id: 'no-fim', price }]);
    const refused = await request(`${t.url}/openai/v1/completions`, { token: admin.token, body: { model: 'no-fim', prompt: 'x', suffix: 'y' } });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('suffix');
    for (const d of [df, dn]) await api(`/deployments/${d.body.id}`, { method: 'DELETE' });
  });

  it('POST /{id}/test makes a one-token call and reports ok or the error, with the latency', async () => {
    a.reset();
    const da = await deployment('tested', a, [{ id: 'probe', upstream_model: 'probe-up', price }], { api_key: SECRET });
    const ok = await api(`/deployments/${da.body.id}/test`, { method: 'POST' });
    expect(ok.body).toMatchObject({ ok: true, model: 'probe', latency_ms: expect.any(Number) });
    expect(a.requests.at(-1)!.body).toMatchObject({ model: 'probe-up', max_tokens: 1 });
    a.script({ failNext: { count: 1, status: 503 } });
    const failed = await api(`/deployments/${da.body.id}/test`, { method: 'POST' });
    expect(failed.body).toMatchObject({ ok: false, error: { code: expect.any(String) } });
    expect((await api('/deployments/env-openai/test', { method: 'POST' })).body.ok).toBe(true);
    // PATCH keeps the key unless given; an empty one removes it.
    expect((await api(`/deployments/${da.body.id}`, { method: 'PATCH', body: { name: 'renamed' } })).body).toMatchObject({ name: 'renamed', has_api_key: true });
    expect((await api(`/deployments/${da.body.id}`, { method: 'PATCH', body: { api_key: '' } })).body.has_api_key).toBe(false);
    expect((await api(`/deployments/${da.body.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await api(`/deployments/${da.body.id}`)).status).toBe(404);
    expect((await chat('probe')).status).toBe(404); // gone from the registry at once (unknown model)
  });

  // The log lines of a whole server process are checked in packages/cli/test/deployments.e2e.test.ts and deployments-cluster.e2e.test.ts (pino writes to the file descriptor).
  it('the API key is in no answer and no warning or output written through the process streams', () => {
    expect(answers.length).toBeGreaterThan(400);
    for (const text of answers) expect(text).not.toContain(SECRET);
    expect(logged.length).toBeGreaterThan(0);
    for (const line of logged) expect(line).not.toContain(SECRET);
  });
});
