/**
 * Observability (CONTRACT §12.7, issue 28): the request log (GET /api/v1/logs: one row per model call on every
 * route, filters, paging, scoping, bad input, bodies redacted, retention in batches), the model metrics in
 * /metrics (parsed; CODELOOM_METRICS_TOKEN) and OpenTelemetry traces received by a real OTLP/HTTP (JSON)
 * receiver started here: request span continuing the caller's traceparent, GenAI model-call span under it,
 * the upstream given the model-call span's traceparent. On SQLite, and PostgreSQL with TEST_DATABASE_URL.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, TEST_DATABASE_URL, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { readSse } from './helpers/sse.js';
import { connect } from './helpers/ws-client.js';
import { newTimeOrderedId } from '../src/storage/ids.js';
import { LogRetention } from '../src/modules/observability/log-retention.js';

interface OtlpSpan {
  traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number };
}

/** A real OTLP/HTTP receiver (JSON encoding): keeps every span of every POST /v1/traces. */
export async function startOtlpReceiver(): Promise<{ url: string; spans: OtlpSpan[]; resources: Array<Record<string, unknown>>; close(): Promise<void> }> {
  const spans: OtlpSpan[] = [];
  const resources: Array<Record<string, unknown>> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces' && String(req.headers['content-type']).startsWith('application/json')) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: Array<{ resource: Record<string, unknown>; scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
        for (const rs of body.resourceSpans) {
          resources.push(rs.resource);
          for (const ss of rs.scopeSpans) spans.push(...ss.spans);
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else {
        res.writeHead(415).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, resources, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** One attribute's value as OTLP JSON carries it. */
export function attr(span: OtlpSpan, key: string): unknown {
  const a = span.attributes.find((x) => x.key === key);
  if (!a) return undefined;
  const v = a.value;
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('boolValue' in v) return v.boolValue;
  if ('arrayValue' in v) return ((v.arrayValue as { values?: Array<{ stringValue?: string }> }).values ?? []).map((x) => x.stringValue);
  return v;
}

/** Prometheus text → samples: name, labels, value. */
export function parsePrometheus(text: string): Array<{ name: string; labels: Record<string, string>; value: number }> {
  const out: Array<{ name: string; labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m) throw new Error(`not a Prometheus sample: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

const waitFor = async <T>(what: () => T | undefined, ms = 5000): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const v = what();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
};

const METRICS_TOKEN = 'metrics-secret-123';

function observabilitySuite(dialect: 'sqlite' | 'postgres') {
  let fake: FakeVendor;
  let t: TestServer;
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  const bsp = process.env.OTEL_BSP_SCHEDULE_DELAY;

  beforeAll(async () => {
    process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
    otlp = await startOtlpReceiver();
    fake = await startOpenAIFake({ script: { reply: 'A small answer from upstream.' } });
    t = await startTestServer({
      dialect,
      env: {
        OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-test,gpt-flaky', CODELOOM_DEFAULT_MODEL: 'sandbox',
        CODELOOM_UPSTREAM_RETRIES: '0', CODELOOM_MODEL_FALLBACKS: 'gpt-flaky=sandbox', CODELOOM_MODEL_PRICES: JSON.stringify({ 'gpt-test': { input: 1, output: 2 } }),
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'codeloom-test',
        CODELOOM_LOG_BODIES: 'redacted', CODELOOM_METRICS_TOKEN: METRICS_TOKEN,
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
    await otlp?.close();
    if (bsp === undefined) delete process.env.OTEL_BSP_SCHEDULE_DELAY;
    else process.env.OTEL_BSP_SCHEDULE_DELAY = bsp;
  });

  it('logs one row per model call on every route, filtered, paged and scoped; bodies redacted', async () => {
    const { token: session } = await registerUser(t.url, { ip: nextIp() });
    const keys: Record<string, { id: string; key: string }> = {};
    for (const name of ['a', 'b']) {
      const res = await request(`${t.url}/api/v1/api-keys`, { token: session, body: { name } });
      keys[name] = { id: res.body.id, key: res.body.key };
    }
    // Key a: /generate JSON (upstream, priced; the prompt holds secrets), SSE (sandbox).
    const json = await request(`${t.url}/api/v1/generate`, {
      token: keys.a!.key, headers: { 'x-request-id': 'req-json-1' },
      body: { prompt: 'todo API; my key is sk-proj-abcdefghijklmnop1234 and mail me at jane@example.com', model: 'gpt-test', max_tokens: 300 },
    });
    expect(json.status, json.text).toBe(200);
    const sse = await fetch(`${t.url}/api/v1/generate`, { method: 'POST', headers: { authorization: `Bearer ${keys.a!.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'blog engine in Rust', model: 'sandbox', max_tokens: 300, stream: true }) });
    expect((await readSse(sse)).at(-1)!.event).toBe('complete');
    // Key b: /openai/v1 (ok, then a 502), and a fallback (gpt-flaky fails → sandbox serves).
    const chat = await request(`${t.url}/openai/v1/chat/completions`, { token: keys.b!.key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 100 } });
    expect(chat.status, chat.text).toBe(200);
    fake.script({ failNext: { count: 1, status: 500 } });
    const failed = await request(`${t.url}/openai/v1/chat/completions`, { token: keys.b!.key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'fail me' }], max_tokens: 50 } });
    expect(failed.status).toBe(502);
    fake.script({ failNext: { count: 1, status: 503 } });
    const fell = await request(`${t.url}/api/v1/generate`, { token: keys.b!.key, body: { prompt: 'fallback please', model: 'gpt-flaky', max_tokens: 200 } });
    expect(fell.status, fell.text).toBe(200);
    expect(fell.body.model).toBe('sandbox');
    // Session: the WebSocket channel.
    const ws = await connect(t.url, session);
    ws.send({ type: 'generate', id: 'w1', prompt: 'CLI in Go', model: 'sandbox', max_tokens: 250 });
    await ws.result('w1');
    ws.ws.close();

    // Rows are written off the answer's path: wait until all six are committed.
    const all = await waitForRows(session, 6);
    expect(all.pagination.total).toBe(6);
    const rows = all.data as Array<Record<string, any>>;
    // Newest first.
    expect(rows.map((r) => r.id)).toEqual([...rows.map((r) => r.id)].sort().reverse());
    for (const r of rows) {
      expect(Object.keys(r).sort()).toEqual(['api_key_id', 'at', 'completion_tokens', 'cost_usd', 'deployment_id', 'error_code', 'fallback_from', 'http_status', 'id', 'latency_ms', 'model', 'organization_id', 'prompt_tokens', 'queued_ms', 'request_id', 'route', 'status', 'stream', 'ttft_ms', 'user_id'].sort());
      expect(r.id).toMatch(/^log_/);
      expect(r.deployment_id).toBeNull();
    }
    const first = rows.find((r) => r.request_id === 'req-json-1')!;
    expect(first).toMatchObject({ route: '/api/v1/generate', model: 'gpt-test', status: 'succeeded', http_status: 200, error_code: null, api_key_id: keys.a!.id, stream: false, fallback_from: null });
    expect(first.prompt_tokens).toBe(json.body.usage.prompt_tokens);
    expect(first.completion_tokens).toBe(json.body.usage.completion_tokens);
    expect(first.cost_usd).toBeGreaterThan(0);
    expect(first.ttft_ms).toBeGreaterThanOrEqual(0);
    expect(first.latency_ms).toBeGreaterThanOrEqual(first.ttft_ms);
    const streamed = rows.find((r) => r.route === '/api/v1/generate' && r.stream === true)!;
    expect(streamed).toMatchObject({ model: 'sandbox', status: 'succeeded', api_key_id: keys.a!.id });
    const failedRow = rows.find((r) => r.status === 'failed')!;
    expect(failedRow).toMatchObject({ route: '/openai/v1/chat/completions', model: 'gpt-test', error_code: 'upstream_error', http_status: 502, completion_tokens: 0, api_key_id: keys.b!.id });
    const fellRow = rows.find((r) => r.fallback_from !== null)!;
    expect(fellRow).toMatchObject({ model: 'sandbox', fallback_from: 'gpt-flaky', status: 'succeeded' });
    expect(rows.find((r) => r.route === 'channel')).toMatchObject({ request_id: 'w1', api_key_id: null, stream: true });

    // Filters.
    const list = async (q: string) => (await request(`${t.url}/api/v1/logs?${q}`, { token: session })).body;
    expect((await list('model=gpt-test')).data.map((r: any) => r.model)).toEqual(['gpt-test', 'gpt-test', 'gpt-test']);
    expect((await list('status=failed')).data).toHaveLength(1);
    expect((await list(`api_key_id=${keys.a!.id}`)).data).toHaveLength(2);
    expect((await list('route=%2Fopenai%2Fv1%2Fchat%2Fcompletions')).data).toHaveLength(2);
    expect((await list(`route=channel&status=succeeded`)).data).toHaveLength(1);
    const newest = rows[0]!.at as string;
    const oldest = rows.at(-1)!.at as string;
    expect((await list(`from=${encodeURIComponent(newest)}`)).data.length).toBeGreaterThanOrEqual(1);
    expect((await list(`to=${encodeURIComponent(oldest)}`)).data.length).toBeGreaterThanOrEqual(1);
    expect((await list(`from=${encodeURIComponent(oldest)}&to=${encodeURIComponent(newest)}`)).pagination.total).toBe(6);
    expect((await list('to=2000-01-01')).data).toEqual([]);
    expect((await list(`from=${new Date().toISOString().slice(0, 10)}`)).pagination.total).toBe(6);
    // Paging.
    const p1 = await list('limit=4');
    const p2 = await list('limit=4&page=2');
    expect(p1.pagination).toEqual({ page: 1, limit: 4, total: 6, total_pages: 2 });
    expect(p2.data).toHaveLength(2);
    expect([...p1.data, ...p2.data].map((r: any) => r.id)).toEqual(rows.map((r) => r.id));

    // Detail: the body kept, redacted.
    const detail = await request(`${t.url}/api/v1/logs/${first.id}`, { token: session });
    expect(detail.status).toBe(200);
    expect(detail.body.id).toBe(first.id);
    expect(detail.body.request_body).toContain('todo API');
    expect(detail.body.request_body).not.toContain('abcdefghijklmnop1234');
    expect(detail.body.request_body).not.toContain('jane@example.com');
    expect(detail.body.request_body).toContain('[EMAIL]');
    expect(detail.body.response_body).toBe(json.body.output);

    // Scoping: another account sees none of it, and a row of this one is 404 to it.
    const { token: other } = await registerUser(t.url, { ip: nextIp() });
    const theirs = await request(`${t.url}/api/v1/logs`, { token: other });
    expect(theirs.status).toBe(200);
    expect(theirs.body.pagination.total).toBe(0);
    const notTheirs = await request(`${t.url}/api/v1/logs/${first.id}`, { token: other });
    expect(notTheirs.status).toBe(404);
    expect(notTheirs.headers.get('content-type')).toContain('application/problem+json');
    expect((await request(`${t.url}/api/v1/logs/log_nope`, { token: session })).status).toBe(404);
    expect((await request(`${t.url}/api/v1/logs`)).status).toBe(401);
  });

  it('logs the Responses and Anthropic Messages routes under their route patterns, with their request ids', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const resp = await request(`${t.url}/openai/v1/responses`, { token, headers: { 'x-request-id': 'req-responses-1' }, body: { model: 'sandbox', input: 'hello' } });
    expect(resp.status, resp.text).toBe(200);
    const msg = await request(`${t.url}/anthropic/v1/messages`, { token, headers: { 'x-request-id': 'req-anthropic-1', 'anthropic-version': '2023-06-01' }, body: { model: 'sandbox', max_tokens: 100, messages: [{ role: 'user', content: 'hello' }] } });
    expect(msg.status, msg.text).toBe(200);
    const rows = (await waitForRows(token, 2)).data as Array<Record<string, unknown>>;
    expect(rows.map((r) => [r.route, r.request_id]).sort()).toEqual([['/anthropic/v1/messages', 'req-anthropic-1'], ['/openai/v1/responses', 'req-responses-1']]);
  });

  it('refuses bad filters with 400 problem documents', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    for (const q of ['status=bogus', 'limit=0', 'limit=101', 'page=0', 'from=yesterday', 'to=2026-13-45', 'from=2026-02-01&to=2026-01-01', 'colour=red', `model=${'m'.repeat(201)}`]) {
      const res = await request(`${t.url}/api/v1/logs?${q}`, { token });
      expect(res.status, q).toBe(400);
      expect(res.headers.get('content-type'), q).toContain('application/problem+json');
      expect(res.body.code, q).toBe('validation_failed');
    }
  });

  it('deletes rows past the retention in bounded batches, leaving newer ones', async () => {
    const repo = t.server.ctx.store.requestLogs;
    const org = `org_retention_${dialect}`;
    const day = 86_400_000;
    const now = Date.now();
    const row = (ms: number) => ({
      id: newTimeOrderedId('log', ms), at: new Date(ms).toISOString(), organization_id: org, user_id: 'usr_x', api_key_id: null, route: '/api/v1/generate', model: 'sandbox',
      deployment_id: null, status: 'succeeded', error_code: null, http_status: 200, prompt_tokens: 1, completion_tokens: 1, cost_micros: 0, latency_ms: 1, ttft_ms: 1,
      queued_ms: 0, fallback_from: null, request_id: null, stream: 0, request_body: null, response_body: null,
    });
    await Promise.all([...Array.from({ length: 7 }, (_, i) => repo.insert(row(now - 40 * day - i * 1000))), ...Array.from({ length: 3 }, (_, i) => repo.insert(row(now - 5 * day - i)))]);
    // Two batches of 3, then one of 1 (plus whatever older rows other tests left: none are that old).
    const batches: number[] = [];
    const spy = { ...repo, deleteBefore: async (before: number, batch: number) => { const n = await repo.deleteBefore(before, batch); batches.push(n); return n; } } as typeof repo;
    const retention = new LogRetention(spy, { days: 30, batch: 3, onError: (e) => { throw e; } });
    expect(await retention.runOnce(now)).toBe(7);
    expect(batches).toEqual([3, 3, 1]);
    const left = await repo.list(org, {}, 1, 100);
    expect(left.total).toBe(3);
    // Running it again (another instance, or the next hour) deletes nothing more.
    expect(await retention.runOnce(now)).toBe(0);
    expect((await repo.list(org, {}, 1, 100)).total).toBe(3);
  });

  it('exports /metrics with the model families (token required), after known calls', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const before = parsePrometheus(await (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text());
    const count = (samples: typeof before, name: string, labels: Record<string, string>) =>
      samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);
    const res = await request(`${t.url}/api/v1/generate`, { token, body: { prompt: 'metrics please', model: 'gpt-test', max_tokens: 200 } });
    expect(res.status).toBe(200);
    fake.script({ failNext: { count: 1, status: 500 } });
    expect((await request(`${t.url}/api/v1/generate`, { token, body: { prompt: 'fail', model: 'gpt-test', max_tokens: 50 } })).status).toBe(502);

    expect((await fetch(`${t.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${t.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const scraped = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(scraped.status).toBe(200);
    const after = parsePrometheus(await scraped.text());
    const model = { model: 'gpt-test', deployment: 'openai' };
    expect(count(after, 'codeloom_model_requests_total', { ...model, status: 'succeeded' }) - count(before, 'codeloom_model_requests_total', { ...model, status: 'succeeded' })).toBe(1);
    expect(count(after, 'codeloom_model_requests_total', { ...model, status: 'failed' }) - count(before, 'codeloom_model_requests_total', { ...model, status: 'failed' })).toBe(1);
    expect(count(after, 'codeloom_model_tokens_total', { ...model, type: 'completion' }) - count(before, 'codeloom_model_tokens_total', { ...model, type: 'completion' })).toBe(res.body.usage.completion_tokens);
    expect(count(after, 'codeloom_model_tokens_total', { ...model, type: 'prompt' }) - count(before, 'codeloom_model_tokens_total', { ...model, type: 'prompt' })).toBeGreaterThanOrEqual(res.body.usage.prompt_tokens);
    expect(count(after, 'codeloom_model_cost_usd_total', model) - count(before, 'codeloom_model_cost_usd_total', model)).toBeGreaterThan(0);
    expect(count(after, 'codeloom_model_ttft_seconds_count', model) - count(before, 'codeloom_model_ttft_seconds_count', model)).toBe(1);
    expect(count(after, 'codeloom_model_duration_seconds_count', { ...model, status: 'failed' }) - count(before, 'codeloom_model_duration_seconds_count', { ...model, status: 'failed' })).toBe(1);
    expect(count(after, 'codeloom_fallbacks_total', { model: 'gpt-flaky', fallback_model: 'sandbox' })).toBeGreaterThanOrEqual(1);
    for (const name of ['codeloom_run_queue_depth', 'codeloom_ws_connections']) expect(after.some((s) => s.name === name), name).toBe(true);
    for (const name of ['codeloom_verifications_total', 'codeloom_runs_total']) expect(await metricFamilies(), name).toContain(name);
    // Label values come from the registry, never from request text: an unknown model is a 400, not a new series.
    expect((await request(`${t.url}/api/v1/generate`, { token, body: { prompt: 'x', model: 'no-such-model-xyz', max_tokens: 10 } })).status).toBe(400);
    const last = await (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    expect(last).not.toContain('no-such-model-xyz');
  });

  it('traces: request span continuing traceparent, GenAI model-call span under it, traceparent sent upstream', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const upstreamCalls = fake.requests.length;
    const res = await request(`${t.url}/api/v1/generate`, { token, headers: { traceparent: `00-${traceId}-${callerSpan}-01` }, body: { prompt: 'trace me', model: 'gpt-test', max_tokens: 200 } });
    expect(res.status).toBe(200);
    const server = await waitFor(() => otlp.spans.find((s) => s.traceId === traceId && s.kind === 2));
    expect(server.parentSpanId).toBe(callerSpan);
    expect(server.name).toBe('POST /api/v1/generate');
    expect(attr(server, 'http.route')).toBe('/api/v1/generate');
    expect(attr(server, 'http.response.status_code')).toBe(200);
    const call = await waitFor(() => otlp.spans.find((s) => s.traceId === traceId && s.kind === 3));
    expect(call.parentSpanId).toBe(server.spanId);
    expect(call.name).toBe('chat gpt-test');
    expect(attr(call, 'gen_ai.operation.name')).toBe('chat');
    expect(attr(call, 'gen_ai.request.model')).toBe('gpt-test');
    expect(attr(call, 'gen_ai.response.model')).toBe('gpt-test');
    expect(attr(call, 'gen_ai.provider.name')).toBe('openai');
    expect(attr(call, 'gen_ai.usage.input_tokens')).toBe(res.body.usage.prompt_tokens);
    expect(attr(call, 'gen_ai.usage.output_tokens')).toBe(res.body.usage.completion_tokens);
    expect(attr(call, 'gen_ai.response.finish_reasons')).toEqual(['stop']);
    // The upstream was told the model-call span's traceparent.
    const upstream = fake.requests.slice(upstreamCalls).at(-1)!;
    expect(upstream.headers.traceparent).toBe(`00-${traceId}-${call.spanId}-01`);
    const resource = JSON.stringify(otlp.resources[0]);
    expect(resource).toContain('codeloom-test');

    // Without an incoming traceparent a new trace starts; a failed call's span is an error with its code.
    fake.script({ failNext: { count: 1, status: 500 } });
    const failed = await request(`${t.url}/api/v1/generate`, { token, headers: { 'x-request-id': 'trace-fail-1' }, body: { prompt: 'fail traced', model: 'gpt-test', max_tokens: 50 } });
    expect(failed.status).toBe(502);
    const failedServer = await waitFor(() => otlp.spans.find((s) => s.kind === 2 && attr(s, 'codeloom.request_id') === 'trace-fail-1'));
    expect(failedServer.parentSpanId ?? '').toBe('');
    expect(failedServer.status?.code).toBe(2);
    const failedCall = await waitFor(() => otlp.spans.find((s) => s.kind === 3 && s.parentSpanId === failedServer.spanId));
    expect(failedCall.status?.code).toBe(2);
    expect(attr(failedCall, 'error.type')).toBe('upstream_error');
  });

  it('traces a run: a run span, a step span per step under it, the step\'s model call under that; runs_total counts it', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const wf = await request(`${t.url}/api/v1/agents/create`, { token, body: { name: 'traced', agents: [{ type: 'coder', model: 'sandbox' }, { type: 'reviewer', model: 'sandbox' }] } });
    expect(wf.status, wf.text).toBe(201);
    const run = await request(`${t.url}/api/v1/workflows/${wf.body.id}/execute`, { token, body: { task: 'add two numbers' } });
    expect(run.status).toBe(202);
    const runSpan = await waitFor(() => otlp.spans.find((s) => s.name === 'run' && attr(s, 'codeloom.run_id') === run.body.id), 10_000);
    expect(attr(runSpan, 'codeloom.run.status')).toBe('succeeded');
    const steps = await waitFor(() => { const x = otlp.spans.filter((s) => s.parentSpanId === runSpan.spanId); return x.length >= 2 ? x : undefined; });
    expect(steps.map((s) => s.name).sort()).toEqual(['step coder', 'step reviewer']);
    for (const step of steps) {
      const call = await waitFor(() => otlp.spans.find((s) => s.parentSpanId === step.spanId));
      expect(call.name).toBe('chat sandbox');
      expect(attr(call, 'codeloom.route')).toBe('run');
    }
    // The steps' log rows name the run.
    const logs = await request(`${t.url}/api/v1/logs?route=run`, { token });
    expect(logs.body.data.map((r: { request_id: string }) => r.request_id)).toEqual([run.body.id, run.body.id]);
    const text = await metricFamilies();
    expect(parsePrometheus(text).find((x) => x.name === 'codeloom_runs_total' && x.labels.status === 'succeeded')?.value).toBeGreaterThanOrEqual(1);
  });

  it('counts each verification attempt by outcome and traces it', async () => {
    const { token } = await registerUser(t.url, { ip: nextIp() });
    const total = (text: string) => parsePrometheus(text).filter((x) => x.name === 'codeloom_verifications_total').reduce((n, x) => n + x.value, 0);
    const before = total(await metricFamilies());
    const res = await request(`${t.url}/api/v1/generate`, { token, headers: { 'x-request-id': 'req-verify-1' }, body: { prompt: 'add two numbers', model: 'sandbox', language: 'javascript', max_tokens: 400, verify: { repair: 0, timeout_s: 60 } } });
    expect(res.status, res.text).toBe(200);
    const status = res.body.verification.status as string;
    const after = parsePrometheus(await metricFamilies());
    expect(total(await metricFamilies()) - before).toBe(1);
    expect(after.find((x) => x.name === 'codeloom_verifications_total' && x.labels.status === status)?.value).toBeGreaterThanOrEqual(1);
    const span = await waitFor(() => otlp.spans.find((s) => s.name === 'verify javascript' && attr(s, 'codeloom.verify.status') === status));
    expect(attr(span, 'codeloom.verify.attempt')).toBe(1);
    // Under the request's span, beside the model call.
    const server = await waitFor(() => otlp.spans.find((s) => s.kind === 2 && attr(s, 'codeloom.request_id') === 'req-verify-1'));
    expect(span.parentSpanId).toBe(server.spanId);
    expect(span.traceId).toBe(server.traceId);
  }, 120_000);

  async function metricFamilies(): Promise<string> {
    return (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  }

  async function waitForRows(token: string, n: number) {
    const until = Date.now() + 5000;
    for (;;) {
      const res = await request(`${t.url}/api/v1/logs?limit=100`, { token });
      expect(res.status, res.text).toBe(200);
      if (res.body.pagination.total >= n || Date.now() > until) return res.body;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

describe('observability (SQLite)', () => observabilitySuite('sqlite'));
describe.skipIf(!TEST_DATABASE_URL)('observability (PostgreSQL)', () => observabilitySuite('postgres'));
