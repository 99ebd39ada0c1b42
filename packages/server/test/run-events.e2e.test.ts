import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A WebSocket client on /api/v1/stream that records every frame. */
async function connect(base: string, token: string) {
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/api/v1/stream`, { headers: { authorization: `Bearer ${token}` } });
  const frames: any[] = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (data) => {
    frames.push(JSON.parse(String(data)));
    for (const w of waiters.splice(0)) w();
  });
  const waitFor = async (pred: (f: any) => boolean, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = frames.find(pred);
      if (hit) return hit;
      if (Date.now() > deadline) throw new Error(`no such frame; got ${JSON.stringify(frames.map((f) => f.event))}`);
      await new Promise<void>((resolve) => { waiters.push(resolve); setTimeout(resolve, 100); });
    }
  };
  await waitFor((f) => f.event === 'connected');
  return {
    frames, waitFor,
    subscribe: (runId: string) => ws.send(JSON.stringify({ type: 'subscribe', run_id: runId })),
    send: (frame: unknown) => ws.send(JSON.stringify(frame)),
    of: (runId: string) => frames.filter((f) => f.id === runId),
    close: () => ws.close(),
  };
}

/** §9 live run events over WebSocket subscribe. */
describe('run events over the streaming channel', () => {
  let t: TestServer;
  let fake: FakeVendor;
  let token: string;
  const api = (path: string) => `${t.url}/api/v1${path}`;
  const post = (path: string, body: unknown, tok = token) => request(api(path), { token: tok, body });
  const workflow = async (agents: Array<[string, string]>) => (await post('/agents/create', { name: 'w', agents: agents.map(([type, model]) => ({ type, model })) })).body.id as string;
  const execute = async (wf: string, task = 'REST API for todos', extra: Record<string, unknown> = {}) => (await post(`/workflows/${wf}/execute`, { task, ...extra })).body.id as string;
  const getRun = async (id: string, tok = token) => (await request(api(`/runs/${id}`), { token: tok })).body;
  const finished = async (id: string) => {
    for (let i = 0; i < 200; i++) {
      const run = await getRun(id);
      if (['succeeded', 'failed', 'cancelled'].includes(run.status)) return run;
      await sleep(50);
    }
    throw new Error('run did not finish');
  };

  beforeAll(async () => {
    fake = await startOpenAIFake();
    // One run per account at a time: a slow run holds the slot while a client subscribes to the next, still queued.
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-x', CODELOOM_OPENAI_MODELS: 'gpt-slow', CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_UPSTREAM_RETRIES: '0', CODELOOM_RUNS_PER_ACCOUNT: '1' } });
  });
  afterAll(async () => { await t.close(); await fake.close(); });
  beforeEach(async () => {
    fake.reset();
    token = (await registerUser(t.url, { ip: nextIp() })).token;
  });

  /** Starts a slow run to hold the account's only slot; returns a function that cancels it. */
  const holdSlot = async () => {
    fake.script({ reply: 'word '.repeat(500), chunkDelayMs: 20 });
    const blocker = await execute(await workflow([['coder', 'gpt-slow']]));
    return async () => { expect((await post(`/runs/${blocker}/cancel`, {})).body.status).toBe('cancelled'); };
  };

  it('streams run_started, step_started, token…, step_completed… and complete, in order', async () => {
    const release = await holdSlot();
    const runId = await execute(await workflow([['planner', 'sandbox'], ['coder', 'sandbox'], ['tester', 'sandbox']]));
    expect((await getRun(runId)).status).toBe('queued');
    const ws = await connect(t.url, token);
    ws.subscribe(runId);
    await sleep(150);
    await release();
    const complete = await ws.waitFor((f) => f.id === runId && (f.event === 'complete' || f.event === 'error'));
    expect(complete.event, JSON.stringify(complete.data).slice(0, 500)).toBe('complete');
    const frames = ws.of(runId);
    // The event names, with each step's tokens collapsed to one entry.
    const names = frames.map((f) => (f.event === 'token' ? `token${f.step}` : f.event === 'run_started' || f.event === 'complete' ? f.event : `${f.event}${f.data.index}`))
      .filter((n, i, all) => n !== all[i - 1] || !n.startsWith('token'));
    expect(names).toEqual(['run_started', 'step_started0', 'token0', 'step_completed0', 'step_started1', 'token1', 'step_completed1', 'step_started2', 'token2', 'step_completed2', 'complete']);
    expect(frames[0].data).toMatchObject({ id: runId, status: 'running' });
    expect(frames[1].data).toEqual({ run_id: runId, index: 0, agent: 'planner', model: 'sandbox', iteration: 0 });
    const run = await getRun(runId);
    expect(complete.data).toEqual(run);
    expect(run.status).toBe('succeeded');
    for (const step of run.steps) {
      const tokens = frames.filter((f) => f.event === 'token' && f.step === step.index).map((f) => f.data).join('');
      expect(tokens).toBe(step.output);
      const done = frames.find((f) => f.event === 'step_completed' && f.data.index === step.index);
      expect(done.data).toEqual({ run_id: runId, index: step.index, step });
    }
    // Nothing after complete.
    await sleep(100);
    expect(ws.of(runId).at(-1).event).toBe('complete');
    ws.close();
  });

  it('announces the steps a review loop inserts', async () => {
    const ws = await connect(t.url, token);
    const release = await holdSlot();
    const loop = (await post('/agents/create', { name: 'l', agents: [{ type: 'coder' }, { type: 'reviewer' }], config: { max_iterations: 1 } })).body.id;
    const loopRun = await execute(loop, 'library for dates [review:changes]', { language: 'python' });
    ws.subscribe(loopRun);
    await sleep(150);
    await release();
    const end = await ws.waitFor((f) => f.id === loopRun && (f.event === 'complete' || f.event === 'error'));
    expect(end.event, JSON.stringify(end.data).slice(0, 300)).toBe('complete');
    const started = ws.of(loopRun).filter((f) => f.event === 'step_started').map((f) => `${f.data.agent}${f.data.iteration}@${f.data.index}`);
    expect(started).toEqual(['coder0@0', 'reviewer0@1', 'coder1@2', 'reviewer1@3']);
    const verdicts = ws.of(loopRun).filter((f) => f.event === 'step_completed' && f.data.step.agent === 'reviewer').map((f) => f.data.step.verdict);
    expect(verdicts).toEqual(['changes_requested', 'changes_requested']);
    ws.close();
  });

  it('ends a failed run with an error frame carrying the run', async () => {
    const ws = await connect(t.url, token);
    const release2 = await holdSlot();
    const failing = await execute(await workflow([['planner', 'sandbox'], ['coder', 'gpt-slow'], ['tester', 'sandbox']]));
    ws.subscribe(failing);
    await sleep(150);
    fake.script({ failNext: { count: 1, status: 500 } });
    await release2();
    const error = await ws.waitFor((f) => f.id === failing && f.event === 'error');
    expect(error.data).toMatchObject({ status: 502, code: 'upstream_error', message: expect.any(String) });
    expect(error.data.run).toEqual(await getRun(failing));
    expect(error.data.run.status).toBe('failed');
    expect(ws.of(failing).filter((f) => f.event === 'step_started').map((f) => f.data.index)).toEqual([0, 1]);
    expect(ws.of(failing).some((f) => f.event === 'complete')).toBe(false);
    ws.close();
  });

  it('sends a cancelled run\'s error frame to subscribers', async () => {
    fake.script({ reply: 'word '.repeat(500), chunkDelayMs: 20 });
    const runId = await execute(await workflow([['coder', 'gpt-slow'], ['tester', 'sandbox']]));
    const ws = await connect(t.url, token);
    ws.subscribe(runId);
    await ws.waitFor((f) => f.id === runId && f.event === 'token');
    await post(`/runs/${runId}/cancel`, {});
    const error = await ws.waitFor((f) => f.id === runId && f.event === 'error');
    expect(error.data).toMatchObject({ status: 499, code: 'cancelled' });
    expect(error.data.run.status).toBe('cancelled');
    expect(error.data.run.steps.map((s: any) => s.status)).toEqual(['failed', 'skipped']);
    ws.close();
  });

  it('replays a finished run\'s events to a late subscriber, then its final frame; `after` skips what the client has', async () => {
    const ok = await execute(await workflow([['planner', 'sandbox']]));
    const early = await connect(t.url, token);
    early.subscribe(ok);
    await finished(ok);
    await early.waitFor((f) => f.id === ok && f.event === 'complete');
    fake.script({ failNext: { count: 1, status: 500 } });
    const bad = await execute(await workflow([['coder', 'gpt-slow']]));
    await finished(bad);
    const ws = await connect(t.url, token);
    ws.subscribe(ok);
    const complete = await ws.waitFor((f) => f.id === ok && f.event === 'complete', 2_000);
    expect(complete.data).toEqual(await getRun(ok));
    // Every frame once, numbered 1, 2, 3, … and equal to what the early subscriber got live.
    expect(ws.of(ok).map((f) => f.seq)).toEqual(ws.of(ok).map((_, i) => i + 1));
    expect(ws.of(ok)).toEqual(early.of(ok));
    expect(ws.of(ok)[0].event).toBe('run_started');
    ws.subscribe(bad);
    const error = await ws.waitFor((f) => f.id === bad && f.event === 'error', 2_000);
    expect(error.data).toMatchObject({ status: 502, code: 'upstream_error', run: await getRun(bad) });
    // Resuming after the third frame sends the rest only.
    const resumed = await connect(t.url, token);
    resumed.frames.length = 0;
    const all = ws.of(ok);
    resumed.send({ type: 'subscribe', run_id: ok, after: 3 });
    await resumed.waitFor((f) => f.id === ok && f.event === 'complete', 2_000);
    expect(resumed.of(ok)).toEqual(all.slice(3));
    // After the last frame: nothing at all.
    resumed.send({ type: 'subscribe', run_id: ok, after: all.length });
    await sleep(150);
    expect(resumed.of(ok)).toEqual(all.slice(3));
    early.close();
    ws.close();
    resumed.close();
  });

  it('answers a subscribe to another account\'s run (or none) with an error frame 404, and sends it nothing more', async () => {
    fake.script({ reply: 'word '.repeat(100), chunkDelayMs: 10 });
    const runId = await execute(await workflow([['coder', 'gpt-slow']]));
    const stranger = await registerUser(t.url, { ip: nextIp() });
    const ws = await connect(t.url, stranger.token);
    ws.subscribe(runId);
    ws.subscribe('run_doesnotexist');
    const denied = await ws.waitFor((f) => f.id === runId);
    expect(denied).toMatchObject({ event: 'error', data: { status: 404, code: 'not_found' } });
    expect((await ws.waitFor((f) => f.id === 'run_doesnotexist')).data.status).toBe(404);
    await finished(runId);
    await sleep(100);
    expect(ws.of(runId)).toHaveLength(1);
    // The connection stays usable.
    ws.frames.length = 0;
    ws.subscribe('');
    expect((await ws.waitFor((f) => f.event === 'error')).data.code).toBe('validation_failed');
    ws.close();
  });
  it('serves the events as SSE with `id: <seq>`: live for a queued run, resumable with Last-Event-ID or ?after=; 404 and 400 as problem documents', async () => {
    const release = await holdSlot();
    const runId = await execute(await workflow([['planner', 'sandbox'], ['coder', 'sandbox']]));
    const sse = (headers: Record<string, string> = {}, query = '') => fetch(api(`/runs/${runId}/events${query}`), { headers: { authorization: `Bearer ${token}`, ...headers } });
    const parse = async (res: Response) => (await res.text()).split('\n\n').filter((b) => b.includes('data: ')).map((b) => ({
      id: Number(/^id: (\d+)$/m.exec(b)![1]), event: /^event: (.*)$/m.exec(b)![1], frame: JSON.parse(/^data: (.*)$/m.exec(b)![1]!),
    }));
    const live = sse();
    const res = await live;
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await release();
    const all = await parse(res);
    expect(all.map((e) => e.id)).toEqual(all.map((_, i) => i + 1));
    expect(all.map((e) => e.frame.seq)).toEqual(all.map((e) => e.id));
    expect(all[0]!.event).toBe('run_started');
    expect(all.filter((e) => e.event === 'step_started')).toHaveLength(2);
    expect(all.at(-1)!.event).toBe('complete');
    expect(all.at(-1)!.frame.data).toEqual(await getRun(runId));
    expect(await parse(await sse({ 'last-event-id': '2' }))).toEqual(all.slice(2));
    expect(await parse(await sse({}, `?after=${all.length - 1}`))).toEqual(all.slice(-1));
    // A reconnect after the final event (what an EventSource does when the stream ends): 204, so it stops reconnecting.
    for (const after of [await sse({ 'last-event-id': String(all.length) }), await sse({}, `?after=${all.length}`), await sse({ 'last-event-id': String(all.length + 5) })]) {
      expect(after.status).toBe(204);
      expect(await after.text()).toBe('');
    }
    const bad = await sse({ 'last-event-id': 'yesterday' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).code).toBe('validation_failed');
    const stranger = await registerUser(t.url, { ip: nextIp() });
    const denied = await fetch(api(`/runs/${runId}/events`), { headers: { authorization: `Bearer ${stranger.token}` } });
    expect(denied.status).toBe(404);
    expect(denied.headers.get('content-type')).toMatch(/problem\+json/);
  });
});
