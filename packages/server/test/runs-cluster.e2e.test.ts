import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Redis } from 'ioredis';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { spawnServer, type SpawnedServer } from './helpers/spawn-server.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL, nextIp, uniqueName } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { connect, type WsClient } from './helpers/ws-client.js';

const enabled = Boolean(TEST_DATABASE_URL && TEST_REDIS_URL);
if (!enabled) console.log('skipping run cluster tests: they need TEST_DATABASE_URL and TEST_REDIS_URL');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FINISHED = ['succeeded', 'failed', 'cancelled'];
const SLOW = { reply: 'word '.repeat(2_000), chunkDelayMs: 20 };
const QUICK = { reply: 'Done.\n\n```typescript src/done.ts\nexport const done = true;\n```\n', chunkDelayMs: 5 };

/** Reads an SSE response incrementally: its events (id, event, frame) as they come. */
function sseReader(res: Response) {
  const events: Array<{ id: number; event: string; frame: any }> = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const done = (async () => {
    for (;;) {
      const { value, done: end } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (end) return;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
        if (!data) continue;
        events.push({ id: Number(/^id: (\d+)$/m.exec(block)?.[1] ?? NaN), event: /^event: (.*)$/m.exec(block)?.[1] ?? 'message', frame: JSON.parse(data) });
      }
    }
  })();
  return { events, done, cancel: () => reader.cancel().catch(() => {}) };
}

/**
 * Runs on two server processes sharing one PostgreSQL schema and one Redis
 * (BullMQ engine): one execution per run, takeover of a killed instance's
 * runs, cancel through the other instance, replayable numbered events.
 */
describe.skipIf(!enabled)('runs across two server processes (PostgreSQL + Redis)', () => {
  const schema = uniqueName('runs_cluster');
  let fake: FakeVendor;
  let env: Record<string, string>;
  let a: SpawnedServer;
  let b: SpawnedServer | undefined;
  let token: string;
  let agent: string;

  const api = (s: SpawnedServer, path: string) => `${s.url}/api/v1${path}`;
  const getRun = async (s: SpawnedServer, id: string, tok = token) => {
    const res = await request(api(s, `/runs/${id}`), { token: tok });
    expect(res.status).toBe(200);
    return res.body;
  };
  const execute = async (s: SpawnedServer, task: string, tok = token, agentId = agent) => {
    const res = await request(api(s, `/agents/${agentId}/execute`), { token: tok, body: { task } });
    expect(res.status, res.text).toBe(202);
    return res.body.id as string;
  };
  const waitFor = async (s: SpawnedServer, id: string, until: (run: any) => boolean, timeoutMs = 20_000, tok = token) => {
    const deadline = Date.now() + timeoutMs;
    // Polls back off to one a second: a long wait on a loaded machine must not spend the free plan's 100 requests a minute.
    for (let pause = 100; ; pause = Math.min(1_000, pause * 1.5)) {
      const run = await getRun(s, id, tok);
      if (until(run)) return run;
      if (Date.now() > deadline) throw new Error(`run ${id} never got there: ${JSON.stringify(run).slice(0, 300)}`);
      await sleep(pause);
    }
  };
  const callsFor = (task: string) => fake.requests.filter((r) => JSON.stringify(r.body).includes(task)).length;
  const newAccount = async (s: SpawnedServer) => {
    const tok = (await registerUser(s.url, { ip: nextIp() })).token;
    const res = await request(api(s, '/agents'), { token: tok, body: { name: 'coder', model: 'gpt-fake', config: { specialization: 'coder' } } });
    expect(res.status, res.text).toBe(201);
    return { token: tok, agent: res.body.id as string };
  };

  beforeAll(async () => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`CREATE SCHEMA "${schema}"`);
    await client.end();
    fake = await startOpenAIFake();
    env = {
      DATABASE_URL: TEST_DATABASE_URL!, CODELOOM_DATABASE_SCHEMA: schema, REDIS_URL: TEST_REDIS_URL!, CODELOOM_REDIS_PREFIX: `${schema}:`,
      OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-x', CODELOOM_OPENAI_MODELS: 'gpt-fake', CODELOOM_DEFAULT_MODEL: 'sandbox',
      CODELOOM_UPSTREAM_RETRIES: '0', CODELOOM_RUNS_PER_ACCOUNT: '1', CODELOOM_RUN_LEASE: '3', CODELOOM_SHUTDOWN_TIMEOUT: '10',
    };
    a = await spawnServer(env);
    ({ token, agent } = await newAccount(a));
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.stop('SIGKILL'), b?.stop('SIGKILL')]);
    await fake?.close();
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
    // The queue, slots and event logs of this test's prefix.
    const redis = new Redis(TEST_REDIS_URL!);
    const keys = await redis.keys(`${schema}:*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('a cancel through the other instance aborts the model call at once; the run stays cancelled and no step starts after it', async () => {
    fake.reset();
    fake.script(SLOW);
    // Only instance A runs yet, so it executes the run; B starts afterwards. Two model steps: the second must never start.
    const wf = await request(api(a, '/agents/create'), { token, body: { name: 'two', agents: [{ type: 'coder', model: 'gpt-fake' }, { type: 'tester', model: 'gpt-fake' }] } });
    expect(wf.status).toBe(201);
    const started = await request(api(a, `/workflows/${wf.body.id}/execute`), { token, body: { task: 'cancel me across instances' } });
    const id = started.body.id as string;
    await waitFor(a, id, (r) => r.status === 'running');
    while (fake.requests.length === 0) await sleep(20);
    b = await spawnServer(env);
    // B's start left A's run alone.
    await sleep(300);
    expect((await getRun(b, id)).status).toBe('running');
    const before = fake.requests.length;
    const res = await request(api(b, `/runs/${id}/cancel`), { token, method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('cancelled');
    expect(res.body.error).toMatchObject({ code: 'cancelled', step: 0 });
    await fake.waitForAborts(1, 1_000);
    await sleep(1_000);
    for (const s of [a, b]) {
      const run = await getRun(s, id);
      expect(run.status).toBe('cancelled');
      expect(run.steps[0]).toMatchObject({ status: 'failed', error: { code: 'cancelled' } });
      expect(run.steps[1].status).toBe('skipped');
    }
    expect(fake.requests.length).toBe(before);
    // A second cancel is a conflict on either instance.
    expect((await request(api(a, `/runs/${id}/cancel`), { token, method: 'POST' })).status).toBe(409);
  });

  it('runs queued on one instance while the other restarts execute once each (model calls == runs)', async () => {
    fake.reset();
    fake.script({ ...QUICK, chunkDelayMs: 30 });
    const accounts = await Promise.all([newAccount(a), newAccount(b!)]);
    // B stops while idle; runs are queued through A (one per account executes at a time); B starts again,
    // and its start finds them all `queued` in the shared database while A executes them.
    expect(await b!.stop('SIGTERM')).toBe(0);
    const tasks = Array.from({ length: 8 }, (_, i) => `restart task ${i} ${uniqueName('t')}`);
    const ids = await Promise.all(tasks.map((task, i) => execute(a, task, accounts[i % 2]!.token, accounts[i % 2]!.agent)));
    b = await spawnServer(env);
    const runs = await Promise.all(ids.map((id, i) => waitFor(b!, id, (r) => FINISHED.includes(r.status), 30_000, accounts[i % 2]!.token)));
    expect(runs.map((r) => r.status)).toEqual(tasks.map(() => 'succeeded'));
    for (const task of tasks) expect(callsFor(task), task).toBe(1);
    expect(fake.requests.length).toBe(tasks.length);
  }, 60_000);

  it('runs of one account execute one at a time across both instances (CODELOOM_RUNS_PER_ACCOUNT=1)', async () => {
    fake.reset();
    fake.script({ ...QUICK, chunkDelayMs: 20 });
    const acct = await newAccount(a);
    const ids = await Promise.all(Array.from({ length: 6 }, (_, i) => execute(i % 2 ? a : b!, `one at a time ${i}`, acct.token, acct.agent)));
    const runs = await Promise.all(ids.map((id) => waitFor(a, id, (r) => FINISHED.includes(r.status), 30_000, acct.token)));
    const spans = runs.map((r) => [Date.parse(r.started_at), Date.parse(r.finished_at)] as const).sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
    expect(runs.every((r) => r.status === 'succeeded')).toBe(true);
  }, 60_000);

  it('a late subscriber on the other instance gets the same numbered events as an early one; SSE resumes after Last-Event-ID', async () => {
    fake.reset();
    fake.script({ reply: 'alpha beta gamma delta epsilon zeta eta theta', chunkDelayMs: 20 });
    const id = await execute(b!, 'replay me');
    const early: WsClient = await connect(a.url, token);
    early.send({ type: 'subscribe', run_id: id });
    const sse = sseReader(await fetch(api(a, `/runs/${id}/events`), { headers: { authorization: `Bearer ${token}` } }));
    await early.waitFor((f) => f.id === id && (f.event === 'complete' || f.event === 'error'), 0, 20_000);
    const earlyFrames = early.frames.filter((f) => f.id === id);
    expect(earlyFrames.map((f: any) => f.event)[0]).toBe('run_started');
    expect(earlyFrames.at(-1)!.event).toBe('complete');
    expect(earlyFrames.map((f: any) => f.seq)).toEqual(earlyFrames.map((_, i) => i + 1));
    expect(earlyFrames.filter((f) => f.event === 'token').map((f) => f.data).join('')).toBe((await getRun(a, id)).steps[0].output);

    const late = await connect(b!.url, token);
    late.send({ type: 'subscribe', run_id: id });
    await late.waitFor((f) => f.id === id && f.event === 'complete', 0, 5_000);
    expect(late.frames.filter((f) => f.id === id)).toEqual(earlyFrames);

    await sse.done;
    expect(sse.events.map((e) => e.frame)).toEqual(earlyFrames);
    expect(sse.events.map((e) => e.id)).toEqual(earlyFrames.map((f: any) => f.seq));
    // Resume through the other instance after the fourth event: the rest, once each.
    const resumed = await fetch(api(b!, `/runs/${id}/events`), { headers: { authorization: `Bearer ${token}`, 'last-event-id': '4' } });
    expect(resumed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const rest = sseReader(resumed);
    await rest.done;
    expect(rest.events.map((e) => e.frame)).toEqual(earlyFrames.slice(4));
    // Another account: 404 problem document, nothing streamed.
    const stranger = (await registerUser(a.url, { ip: nextIp() })).token;
    const denied = await fetch(api(b!, `/runs/${id}/events`), { headers: { authorization: `Bearer ${stranger}` } });
    expect(denied.status).toBe(404);
    expect((await denied.json()).code).toBe('not_found');
    early.ws.close();
    late.ws.close();
  }, 30_000);

  it('kill -9 of the executing instance: a live instance ends its run `interrupted` within seconds and runs the queued one', async () => {
    fake.reset();
    fake.script(SLOW);
    // Only A executes: B is stopped while the run starts, then comes back.
    expect(await b!.stop('SIGTERM')).toBe(0);
    const id = await execute(a, 'killed mid-step');
    await waitFor(a, id, (r) => r.status === 'running');
    const queued = await execute(a, 'queued behind it');
    expect((await getRun(a, queued)).status).toBe('queued');
    b = await spawnServer(env);
    await sleep(300);
    expect((await getRun(b, id)).status).toBe('running'); // B's start did not touch it
    await a.stop('SIGKILL');
    const killedAt = Date.now();
    fake.script(QUICK);
    const run = await waitFor(b, id, (r) => r.status !== 'running', 60_000);
    expect(Date.now() - killedAt).toBeLessThan(60_000);
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'interrupted', step: 0 });
    expect(run.steps[0]).toMatchObject({ status: 'failed', error: { code: 'interrupted' } });
    const next = await waitFor(b, queued, (r) => FINISHED.includes(r.status), 30_000);
    expect(next.status).toBe('succeeded');
    expect(callsFor('queued behind it')).toBe(1);
    // Subscribers of the interrupted run got its end too.
    const late = await connect(b.url, token);
    late.send({ type: 'subscribe', run_id: id });
    expect((await late.waitFor((f) => f.id === id && f.event === 'error', 0, 5_000)).data).toMatchObject({ code: 'interrupted' });
    late.ws.close();
    a = await spawnServer(env);
    // The restarted instance leaves the finished runs alone.
    expect((await getRun(a, id)).status).toBe('failed');
  }, 90_000);
});
