import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { lookup } from 'node:dns/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, uniqueName, TEST_DATABASE_URL, TEST_REDIS_URL, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { spawnServer, type SpawnedServer } from './helpers/spawn-server.js';
import { createPgSchema, dropPgSchema } from './helpers/pg-schema.js';
import { privateAddressReason } from '../src/modules/webhooks/webhook-address.js';
import { eventually, signatureValid, sleep, startWebhookReceiver } from './helpers/webhook-receiver.js';

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;
const FINISHED = ['succeeded', 'failed', 'cancelled'];

/** One account's calls to a server. */
async function account(base: string) {
  return clientFor(base, (await registerUser(base, { ip: nextIp() })).token);
}

/** Calls with this token (it stays valid on a new process over the same storage). */
function clientFor(base: string, token: string) {
  const api = (path: string) => `${base}/api/v1${path}`;
  const c = {
    token,
    get: (path: string) => request(api(path), { token }),
    post: (path: string, body: unknown = {}) => request(api(path), { token, body }),
    del: (path: string) => request(api(path), { token, method: 'DELETE' }),
    webhook: async (url: string, events: string[]) => {
      const res = await c.post('/webhooks', { url, events });
      expect(res.status, res.text).toBe(201);
      return res.body as { id: string; secret: string };
    },
    /** Starts a run of a one-step workflow and returns its id. */
    run: async (model = 'sandbox', task = 'a function that adds two numbers') => {
      const wf = await c.post('/agents/create', { name: 'one', agents: [{ type: 'coder', model }] });
      expect(wf.status, wf.text).toBe(201);
      const run = await c.post(`/workflows/${wf.body.id}/execute`, { task });
      expect(run.status, run.text).toBe(202);
      return run.body.id as string;
    },
    finishedRun: async (id: string) => eventually(async () => {
      const r = await c.get(`/runs/${id}`);
      return FINISHED.includes(r.body.status) && r.body;
    }, `run ${id} to finish`),
    /** Polls the delivery log (gently: the account's requests a minute are limited) until `until` holds for the newest delivery. */
    delivery: (webhookId: string, until: (d: any) => boolean, timeoutMs = 20_000) => eventually(async () => {
      const res = await c.get(`/webhooks/${webhookId}/deliveries`);
      expect(res.status).toBe(200);
      await sleep(250);
      return res.body.data[0] && until(res.body.data[0]) && res.body.data[0];
    }, `a delivery of ${webhookId}`, timeoutMs),
  };
  return c;
}

describe('webhooks API', () => {
  let server: TestServer;
  beforeAll(async () => { server = await startTestServer(); });
  afterAll(async () => { await server?.close(); });

  it('create shows the secret once; list and get never do; another account sees 404; delete removes it', async () => {
    const a = await account(server.url);
    const created = await a.post('/webhooks', { url: 'https://hooks.example.com/codeloom', events: ['run.succeeded', 'budget.exceeded'], description: 'ops' });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^whk_/), url: 'https://hooks.example.com/codeloom', events: ['run.succeeded', 'budget.exceeded'],
      description: 'ops', secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/), created_at: expect.any(String),
    });
    const { secret, ...shown } = created.body;
    const list = await a.get('/webhooks');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ data: [shown] });
    const one = await a.get(`/webhooks/${shown.id}`);
    expect(one.body).toEqual(shown);
    expect(list.text + one.text).not.toContain(secret);
    expect((await a.get(`/webhooks/${shown.id}/deliveries`)).body).toEqual({ data: [] });

    const b = await account(server.url);
    expect((await b.get('/webhooks')).body).toEqual({ data: [] });
    for (const res of [await b.get(`/webhooks/${shown.id}`), await b.get(`/webhooks/${shown.id}/deliveries`), await b.del(`/webhooks/${shown.id}`)]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    expect((await a.get(`/webhooks/${shown.id}`)).status).toBe(200);

    expect((await a.del(`/webhooks/${shown.id}`)).body).toEqual({ success: true });
    expect((await a.get(`/webhooks/${shown.id}`)).status).toBe(404);
    expect((await a.del(`/webhooks/${shown.id}`)).status).toBe(404);
    expect((await a.get('/webhooks')).body).toEqual({ data: [] });
  });

  it('API keys cannot manage webhooks (a signed-in session only)', async () => {
    const a = await account(server.url);
    const key = await a.post('/api-keys', { name: 'ci' });
    expect(key.status).toBe(201);
    const res = await request(`${server.url}/api/v1/webhooks`, { token: key.body.key });
    expect(res.status).toBe(403);
  });

  it('refuses bad bodies with 400 validation_failed', async () => {
    const a = await account(server.url);
    const bad: Array<[unknown, RegExp]> = [
      [{ url: 'ftp://example.com/x', events: ['run.failed'] }, /http or https/],
      [{ url: 'not a url', events: ['run.failed'] }, /absolute http/],
      [{ url: '/relative', events: ['run.failed'] }, /absolute http/],
      [{ url: `https://example.com/${'a'.repeat(2048)}`, events: ['run.failed'] }, /./],
      [{ url: 'https://example.com/', events: [] }, /./],
      [{ url: 'https://example.com/', events: ['run.exploded'] }, /./],
      [{ url: 'https://example.com/', events: ['run.failed', 'run.failed'] }, /./],
      [{ url: 'https://example.com/' }, /./],
      [{ url: 'https://example.com/', events: ['run.failed'], secret: 'mine' }, /./],
    ];
    for (const [body, detail] of bad) {
      const res = await a.post('/webhooks', body);
      expect(res.status, JSON.stringify(body).slice(0, 100)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.detail).toMatch(detail);
    }
    expect((await a.get('/webhooks')).body.data).toEqual([]);
  });

  it('refuses loopback, private, link-local and unique-local hosts, saying why', async () => {
    const a = await account(server.url);
    const urls = [
      'http://localhost:8080/x', 'http://api.localhost/x', 'http://127.0.0.1/x', 'http://127.1.2.3/x', 'http://0.0.0.0/x', 'http://10.1.2.3/x',
      'http://172.16.0.1/x', 'http://172.31.255.254/x', 'http://192.168.1.1/x', 'http://169.254.169.254/latest/meta-data', 'http://100.64.0.1/x',
      'http://[::1]/x', 'http://[fd00::1]/x', 'http://[fc00::1]/x', 'http://[fe80::1]/x', 'http://[::ffff:127.0.0.1]/x', 'http://[::ffff:a01:203]/x',
      'http://2130706433/x', 'http://0x7f.0.0.1/x',
    ];
    for (const url of urls) {
      const res = await a.post('/webhooks', { url, events: ['run.failed'] });
      expect(res.status, url).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.detail, url).toMatch(/loopback|private|link-local|unique-local|this network|shared/);
      expect(res.body.detail).toContain('CODELOOM_WEBHOOK_ALLOW_PRIVATE=true');
      expect(res.body.errors).toEqual([{ path: '/url', message: expect.any(String) }]);
    }
    for (const url of ['https://hooks.example.com/x', 'http://93.184.216.34/x', 'https://[2606:4700:4700::1111]/x']) {
      expect((await a.post('/webhooks', { url, events: ['run.failed'] })).status, url).toBe(201);
    }
  });

  it('an organization has at most 20 webhooks (409 beyond, with the reason)', async () => {
    const a = await account(server.url);
    for (let i = 0; i < 20; i++) await a.webhook(`https://hooks.example.com/${i}`, ['run.failed']);
    const res = await a.post('/webhooks', { url: 'https://hooks.example.com/21', events: ['run.failed'] });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/at most 20 webhooks/);
    expect((await a.get('/webhooks')).body.data).toHaveLength(20);
  });

  it('the OpenAPI document describes the routes under the Webhooks tag', async () => {
    const doc = (await request(`${server.url}/openapi.json`)).body;
    for (const [path, methods] of [['/api/v1/webhooks', ['get', 'post']], ['/api/v1/webhooks/{id}', ['get', 'delete']], ['/api/v1/webhooks/{id}/deliveries', ['get']]] as const) {
      for (const m of methods) {
        expect(doc.paths[path]?.[m]?.tags, `${m} ${path}`).toEqual(['Webhooks']);
        expect(doc.paths[path][m].summary).toBeTruthy();
      }
    }
  });
});

describe('webhook deliveries (CODELOOM_WEBHOOK_ALLOW_PRIVATE=true, a loopback receiver)', () => {
  let server: TestServer;
  let fake: FakeVendor;
  const receivers: Receiver[] = [];
  const receiver = async (answer?: Parameters<typeof startWebhookReceiver>[0]) => {
    const r = await startWebhookReceiver(answer);
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    fake = await startOpenAIFake();
    server = await startTestServer({
      env: {
        CODELOOM_WEBHOOK_ALLOW_PRIVATE: 'true', CODELOOM_WEBHOOK_RETRY_BASE_MS: '200',
        OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-x', CODELOOM_OPENAI_MODELS: 'gpt-slow', CODELOOM_UPSTREAM_RETRIES: '0',
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  it('a sandbox run that succeeds is sent once as run.succeeded, signed, with the run as GET returns it; only to subscribed webhooks of its organization', async () => {
    const a = await account(server.url);
    const hook = await receiver();
    const failedOnly = await receiver();
    const other = await receiver();
    const { id: webhookId, secret } = await a.webhook(hook.url, ['run.succeeded', 'run.failed']);
    await a.webhook(failedOnly.url, ['run.failed', 'budget.exceeded']);
    const b = await account(server.url);
    await b.webhook(other.url, ['run.succeeded']);

    const runId = await a.run();
    const run = await a.finishedRun(runId);
    expect(run.status).toBe('succeeded');
    const [got] = await eventually(() => hook.received.length > 0 && hook.received, 'the run.succeeded delivery');
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['user-agent']).toMatch(/^Codeloom-Webhooks\/\d+\.\d+\.\d+/);
    expect(signatureValid(secret, got!.headers['codeloom-signature'] as string, got!.body)).toBe(true);
    expect(signatureValid(secret, got!.headers['codeloom-signature'] as string, `${got!.body} `)).toBe(false);
    const t = Number(/^t=(\d+),/.exec(got!.headers['codeloom-signature'] as string)![1]);
    expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(60);
    expect(got!.json).toEqual({ id: expect.stringMatching(/^evt_/), type: 'run.succeeded', created_at: expect.any(String), data: (await a.get(`/runs/${runId}`)).body });
    expect(got!.json.data.status).toBe('succeeded');

    const delivery = await a.delivery(webhookId, (d) => d.status !== 'pending');
    expect(delivery).toMatchObject({ id: expect.stringMatching(/^whd_/), event: 'run.succeeded', event_id: got!.json.id, status: 'succeeded', attempts: 1, response_status: 200, last_error: null });
    expect(delivery.delivered_at >= delivery.created_at).toBe(true);
    // Exactly once, and to no one else.
    await sleep(1_000);
    expect(hook.received).toHaveLength(1);
    expect(failedOnly.received).toHaveLength(0);
    expect(other.received).toHaveLength(0);
    expect((await a.get(`/webhooks/${webhookId}/deliveries`)).body.data).toHaveLength(1);
  });

  it('a cancelled run is sent once as run.cancelled', async () => {
    fake.reset();
    fake.script({ reply: 'word '.repeat(2_000), chunkDelayMs: 20 });
    const a = await account(server.url);
    const hook = await receiver();
    await a.webhook(hook.url, ['run.succeeded', 'run.failed', 'run.cancelled']);
    const runId = await a.run('gpt-slow');
    await eventually(async () => (await a.get(`/runs/${runId}`)).body.status === 'running' && fake.requests.length > 0, 'the run to start');
    const cancelled = await request(`${server.url}/api/v1/runs/${runId}/cancel`, { token: a.token, method: 'POST' });
    expect(cancelled.status).toBe(200);
    const [got] = await eventually(() => hook.received.length > 0 && hook.received, 'the run.cancelled delivery');
    expect(got!.json.type).toBe('run.cancelled');
    expect(got!.json.data).toMatchObject({ id: runId, status: 'cancelled', error: { code: 'cancelled' } });
    await sleep(1_000);
    expect(hook.received.map((h) => h.json.type)).toEqual(['run.cancelled']);
  });

  it('a receiver that answers 500 then 200 gets a retry of the same event; the log shows 2 attempts, 200, succeeded', async () => {
    const a = await account(server.url);
    const hook = await receiver((n) => (n === 1 ? 500 : 200));
    const { id: webhookId, secret } = await a.webhook(hook.url, ['run.succeeded']);
    await a.finishedRun(await a.run());
    await eventually(() => hook.received.length >= 2, 'the retry');
    const [first, second] = hook.received;
    expect(first!.answered).toBe(500);
    expect(second!.answered).toBe(200);
    expect(second!.body).toBe(first!.body);
    expect(second!.headers['codeloom-delivery']).toBe(first!.headers['codeloom-delivery']);
    expect(signatureValid(secret, second!.headers['codeloom-signature'] as string, second!.body)).toBe(true);
    const delivery = await a.delivery(webhookId, (d) => d.status !== 'pending');
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 2, response_status: 200, last_error: null, next_attempt_at: null });
    await sleep(800);
    expect(hook.received).toHaveLength(2);
  });

  it('a receiver that never answers 2xx: the log shows each attempt failing, pending with a next attempt, the gaps growing', async () => {
    const a = await account(server.url);
    const hook = await receiver(() => 503);
    const { id: webhookId } = await a.webhook(hook.url, ['run.succeeded']);
    await a.finishedRun(await a.run());
    const delivery = await a.delivery(webhookId, (d) => d.attempts >= 2);
    expect(delivery).toMatchObject({ status: 'pending', response_status: 503, last_error: 'HTTP 503', next_attempt_at: expect.any(String) });
    // Backoff: the gaps between attempts grow.
    await eventually(() => hook.received.length >= 3, 'a third attempt');
    const [r1, r2, r3] = hook.received;
    expect(r3!.at - r2!.at).toBeGreaterThan(r2!.at - r1!.at);
  });
});

describe('webhook deliveries that never succeed end failed', () => {
  it('after the retry window (24 h at the default schedule; 8.6 s with CODELOOM_WEBHOOK_RETRY_BASE_MS=1) the delivery is failed and no longer tried', async () => {
    const hook = await startWebhookReceiver(() => 500);
    const server = await startTestServer({ env: { CODELOOM_WEBHOOK_ALLOW_PRIVATE: 'true', CODELOOM_WEBHOOK_RETRY_BASE_MS: '1' } });
    try {
      const a = await account(server.url);
      const { id } = await a.webhook(hook.url, ['run.succeeded']);
      await a.finishedRun(await a.run());
      const delivery = await a.delivery(id, (d) => d.status === 'failed', 30_000);
      expect(delivery).toMatchObject({ response_status: 500, last_error: 'HTTP 500', next_attempt_at: null, delivered_at: null });
      expect(delivery.attempts).toBe(hook.received.length);
      expect(delivery.attempts).toBeGreaterThan(5);
      const attempts = hook.received.length;
      await sleep(1_000);
      expect(hook.received).toHaveLength(attempts);
    } finally {
      await server.close();
      await hook.close();
    }
  }, 40_000);
});

describe('webhook delivery refused at delivery time without CODELOOM_WEBHOOK_ALLOW_PRIVATE', () => {
  it('a name that passes creation but resolves to a private address is never connected to; the attempt fails saying why', async () => {
    // This machine's own name: not `localhost` nor an IP literal (so creation accepts it), but it resolves to one of its own addresses.
    const host = hostname();
    const resolved = await lookup(host, { all: true }).catch(() => []);
    const privateOnes = resolved.filter((r) => privateAddressReason(r.address));
    if (!privateOnes.length) return void console.log(`skipping: ${host} does not resolve to a private address here (${JSON.stringify(resolved)})`);
    const hook = await startWebhookReceiver();
    const server = await startTestServer({ env: { CODELOOM_WEBHOOK_RETRY_BASE_MS: '100000' } });
    try {
      const a = await account(server.url);
      const { id } = await a.webhook(`http://${host}:${new URL(hook.url).port}/hooks`, ['run.succeeded']);
      await a.finishedRun(await a.run());
      const delivery = await a.delivery(id, (d) => d.attempts >= 1 && d.last_error);
      expect(delivery).toMatchObject({ status: 'pending', response_status: null });
      expect(delivery.last_error).toMatch(new RegExp(`^refused: ${host} resolves to .*CODELOOM_WEBHOOK_ALLOW_PRIVATE is off`));
      expect(hook.received).toHaveLength(0);
    } finally {
      await server.close();
      await hook.close();
    }
  });
});

/** Survival across a restart of a real server process: the delivery row is the truth the new process schedules from. */
function restartSuite(name: string, enabled: boolean, setup: () => Promise<{ env: Record<string, string>; beforeRestart?: () => Promise<void>; cleanup: () => Promise<void> }>) {
  describe.skipIf(!enabled)(`webhook deliveries survive a restart (${name})`, () => {
    let env: Record<string, string>;
    let beforeRestart: (() => Promise<void>) | undefined;
    let cleanup: () => Promise<void>;
    let server: SpawnedServer | undefined;
    let hook: Receiver;

    beforeAll(async () => {
      ({ env, beforeRestart, cleanup } = await setup());
      hook = await startWebhookReceiver(() => 500);
    }, 60_000);
    afterAll(async () => {
      await server?.stop('SIGKILL');
      await hook?.close();
      await cleanup?.();
    });

    it('the receiver fails, the server is killed, a new one on the same storage delivers it', async () => {
      server = await spawnServer(env);
      const a = await account(server.url);
      const { id: webhookId, secret } = await a.webhook(hook.url, ['run.succeeded']);
      await a.finishedRun(await a.run());
      await eventually(() => hook.received.length >= 1, 'a first (failed) attempt');
      expect(await server.stop('SIGKILL')).toBeNull();
      const failedAttempts = hook.received.length;
      hook.answerWith(() => 200);
      await beforeRestart?.();
      server = await spawnServer(env);
      await eventually(() => hook.received.some((h) => h.answered === 200), 'the delivery after the restart', 30_000);
      const ok = hook.received.find((h) => h.answered === 200)!;
      expect(ok.json.type).toBe('run.succeeded');
      expect(ok.body).toBe(hook.received[0]!.body);
      expect(signatureValid(secret, ok.headers['codeloom-signature'] as string, ok.body)).toBe(true);
      const delivery = await clientFor(server.url, a.token).delivery(webhookId, (d) => d.status === 'succeeded');
      expect(delivery).toMatchObject({ attempts: failedAttempts + 1, response_status: 200 });
      await sleep(1_000);
      expect(hook.received.filter((h) => h.answered === 200)).toHaveLength(1);
    }, 60_000);
  });
}

// Retries 2 s apart: the kill lands between attempts, so the next one is made by the new process.
const RESTART_ENV = { CODELOOM_WEBHOOK_ALLOW_PRIVATE: 'true', CODELOOM_WEBHOOK_RETRY_BASE_MS: '2000', LOG_LEVEL: 'warn' };

restartSuite('SQLite file, in-process queue', true, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'codeloom-webhooks-'));
  return { env: { ...RESTART_ENV, CODELOOM_DATA_DIR: dataDir }, cleanup: async () => rmSync(dataDir, { recursive: true, force: true }) };
});

const clusterEnabled = Boolean(TEST_DATABASE_URL && TEST_REDIS_URL);
if (!clusterEnabled) console.log('skipping the PostgreSQL + Redis webhook restart test: it needs TEST_DATABASE_URL and TEST_REDIS_URL');
restartSuite('PostgreSQL + BullMQ, the queue lost too', clusterEnabled, async () => {
  const schema = uniqueName('whk');
  await createPgSchema(schema);
  const prefix = `${schema}:`;
  const dropKeys = async () => {
    const redis = new Redis(TEST_REDIS_URL!);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  };
  return {
    env: { ...RESTART_ENV, DATABASE_URL: TEST_DATABASE_URL!, CODELOOM_DATABASE_SCHEMA: schema, REDIS_URL: TEST_REDIS_URL!, CODELOOM_REDIS_PREFIX: prefix },
    // Redis loses the delayed job too (flushed, or never persisted): the new process schedules it from the database.
    beforeRestart: dropKeys,
    cleanup: async () => { await dropPgSchema(schema); await dropKeys(); },
  };
});

describe.skipIf(!clusterEnabled)('two server processes on PostgreSQL + BullMQ deliver each attempt once', () => {
  const schema = uniqueName('whk2');
  const prefix = `${schema}:`;
  let env: Record<string, string>;
  let a: SpawnedServer | undefined;
  let b: SpawnedServer | undefined;
  let hook: Receiver;

  beforeAll(async () => {
    await createPgSchema(schema);
    env = { ...RESTART_ENV, CODELOOM_WEBHOOK_RETRY_BASE_MS: '300', DATABASE_URL: TEST_DATABASE_URL!, CODELOOM_DATABASE_SCHEMA: schema, REDIS_URL: TEST_REDIS_URL!, CODELOOM_REDIS_PREFIX: prefix };
    // Each delivery's first attempt fails, its second succeeds.
    const seen = new Map<string, number>();
    hook = await startWebhookReceiver((_n, h) => {
      const id = h.headers['codeloom-delivery'] as string;
      seen.set(id, (seen.get(id) ?? 0) + 1);
      return seen.get(id) === 1 ? 500 : 200;
    });
    a = await spawnServer(env);
    b = await spawnServer(env);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop('SIGKILL'), b?.stop('SIGKILL')]);
    await hook?.close();
    await dropPgSchema(schema);
    const redis = new Redis(TEST_REDIS_URL!);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('runs finished on either instance, one of them restarted meanwhile: every delivery is attempted exactly twice (500, then 200)', async () => {
    const ca = await account(a!.url);
    const cb = clientFor(b!.url, ca.token);
    const webhooks = await Promise.all([0, 1].map(() => ca.webhook(hook.url, ['run.succeeded'])));
    const runs = await Promise.all([ca.run(), cb.run(), ca.run(), cb.run()]);
    await Promise.all(runs.map((id) => ca.finishedRun(id)));
    // A new process starts while deliveries are pending: its start schedules them again (the same job ids).
    // A graceful stop (SIGTERM) closes the delivery queue and its connections: the process exits 0.
    expect(await b!.stop('SIGTERM')).toBe(0);
    b = await spawnServer(env);
    const expected = runs.length * webhooks.length;
    await eventually(() => hook.received.filter((h) => h.answered === 200).length >= expected, `${expected} delivered`, 30_000);
    await sleep(1_500);
    const perDelivery = new Map<string, number[]>();
    for (const h of hook.received) perDelivery.set(h.headers['codeloom-delivery'] as string, [...(perDelivery.get(h.headers['codeloom-delivery'] as string) ?? []), h.answered]);
    expect(perDelivery.size).toBe(expected);
    for (const answers of perDelivery.values()) expect(answers).toEqual([500, 200]);
    // Each webhook got each run's event once.
    const events = hook.received.filter((h) => h.answered === 200).map((h) => `${h.json.data.id}`);
    expect(new Set(events).size).toBe(runs.length);
    expect(events.sort()).toEqual([...runs, ...runs].sort());
  }, 60_000);
});

describe('a run interrupted by a killed server is sent as run.failed by the next start', () => {
  let fake: FakeVendor;
  let server: SpawnedServer | undefined;
  let hook: Receiver;
  let dataDir: string;

  beforeAll(async () => {
    fake = await startOpenAIFake();
    hook = await startWebhookReceiver();
    dataDir = mkdtempSync(join(tmpdir(), 'codeloom-webhooks-run-'));
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await fake?.close();
    await hook?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('SIGKILL mid-run: after the restart the run is failed/interrupted and its webhook hears run.failed once', async () => {
    const env = {
      ...RESTART_ENV, CODELOOM_DATA_DIR: dataDir, OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-x', CODELOOM_OPENAI_MODELS: 'gpt-slow',
      CODELOOM_UPSTREAM_RETRIES: '0',
    };
    fake.script({ reply: 'word '.repeat(3_000), chunkDelayMs: 50 });
    server = await spawnServer(env);
    const a = await account(server.url);
    await a.webhook(hook.url, ['run.succeeded', 'run.failed', 'run.cancelled']);
    const runId = await a.run('gpt-slow');
    await eventually(async () => fake.requests.length > 0 && (await a.get(`/runs/${runId}`)).body.status === 'running', 'the run to be running');
    await server.stop('SIGKILL');
    expect(hook.received).toHaveLength(0);
    server = await spawnServer(env);
    const [got] = await eventually(() => hook.received.length > 0 && hook.received, 'run.failed after the restart');
    expect(got!.json.type).toBe('run.failed');
    expect(got!.json.data).toMatchObject({ id: runId, status: 'failed', error: { code: 'interrupted' } });
    expect(got!.json.data).toEqual((await clientFor(server.url, a.token).get(`/runs/${runId}`)).body);
    await sleep(1_000);
    expect(hook.received).toHaveLength(1);
  }, 60_000);
});
