import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAIFake } from '../../server/test/fakes/openai-fake.js';
import type { FakeVendor } from '../../server/test/fakes/fake-vendor.js';
import { CodeloomError, type Codeloom, type RunEvent } from '../src/index.js';
import { WebSocket, clientFor, eventually, newUser, startTestServer, type TestServer } from './helpers.js';

const fail = (e: unknown) => e as CodeloomError;
const WORDS = Array.from({ length: 200 }, (_, i) => `word${i} `);

describe('stream.generate over the WebSocket channel', () => {
  let t: TestServer;
  let fake: FakeVendor;
  let client: Codeloom;

  beforeAll(async () => {
    fake = await startOpenAIFake();
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_DEFAULT_MODEL: 'sandbox' } });
    client = (await newUser(t)).client;
  });
  afterAll(async () => { await t.close(); await fake.close(); });
  beforeEach(() => { fake.reset(); });

  it('yields the tokens; result has files and output equal to the tokens', async () => {
    const stream = client.stream.generate({ prompt: 'REST API for todos', language: 'typescript', context: { framework: 'fastify' } });
    const tokens: string[] = [];
    for await (const token of stream) tokens.push(token);
    const result = await stream.result;
    expect(tokens.length).toBeGreaterThan(10);
    expect(tokens.join('')).toBe(result.output);
    expect(stream.text).toBe(result.output);
    expect(result.model).toBe('sandbox');
    expect(result.id).toMatch(/^gen_/);
    expect(result.files.length).toBeGreaterThan(0);
    // The same result is in the history.
    expect((await client.generations.get(result.id)).output).toBe(result.output);
  });

  it('streamTokens: false gives only the result', async () => {
    const stream = client.stream.generate({ prompt: 'word counter', language: 'python' }, { streamTokens: false, id: 'mine-1' });
    expect(stream.id).toBe('mine-1');
    const tokens: string[] = [];
    for await (const token of stream) tokens.push(token);
    expect(tokens).toEqual([]);
    expect((await stream.result).language).toBe('python');
  });

  it('an AbortSignal cancels: {"type":"cancel"} aborts the model call; iterator and result end with code cancelled', async () => {
    fake.script({ chunks: WORDS, chunkDelayMs: 20 });
    const controller = new AbortController();
    const stream = client.stream.generate({ prompt: 'slow one', model: 'gpt-test' }, { signal: controller.signal });
    const tokens: string[] = [];
    const iterated = (async () => {
      for await (const token of stream) {
        tokens.push(token);
        if (tokens.length === 3) controller.abort();
      }
    })().catch(fail);
    const error = await stream.result.catch(fail);
    expect(CodeloomError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'cancelled', status: 499 });
    expect(await iterated).toMatchObject({ code: 'cancelled' });
    expect(tokens).toHaveLength(3); // not one token after the abort
    await fake.waitForAborts(1, 5_000); // the server was told and aborted the upstream call
  });

  it('abort ends the iterator within one event-loop turn, also with tokens received but not yet read', async () => {
    fake.script({ chunks: WORDS, chunkDelayMs: 5 });
    const stream = client.stream.generate({ prompt: 'slow one', model: 'gpt-test' });
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    await eventually(async () => (stream.text.split(' ').length > 6 ? true : undefined), 5_000, 5); // more tokens wait unread
    stream.cancel();
    const next = iterator.next().then((r) => ({ yielded: r }), (e: unknown) => ({ error: e as CodeloomError }));
    const turn = new Promise((resolve) => setImmediate(() => resolve('still pending')));
    const outcome = await Promise.race([next, turn]);
    expect(outcome).toMatchObject({ error: { code: 'cancelled', status: 499 } });
    expect(await stream.result.catch(fail)).toMatchObject({ code: 'cancelled' });
    await fake.waitForAborts(1, 5_000);
  });

  it('cancel() before the connection is up, and an already-aborted signal', async () => {
    const early = client.stream.generate({ prompt: 'x' });
    early.cancel();
    expect(await early.result.catch(fail)).toMatchObject({ code: 'cancelled' });
    const aborted = client.stream.generate({ prompt: 'x' }, { signal: AbortSignal.abort() });
    expect(await aborted.result.catch(fail)).toMatchObject({ code: 'cancelled' });
  });

  it('errors of a generation reject with the server\'s code', async () => {
    const bad = await client.stream.generate({ prompt: 'x', model: 'no-such-model' }).result.catch(fail);
    expect(bad).toMatchObject({ status: 400, code: 'validation_failed' });
    fake.script({ failNext: { count: 10, status: 500 } });
    const upstream = await client.stream.generate({ prompt: 'x', model: 'gpt-test' }).result.catch(fail);
    expect(upstream.status).toBeGreaterThanOrEqual(500);
    expect(upstream.code).toMatch(/^upstream_|service_unavailable/);
  });

  it('several streams at once', async () => {
    const results = await Promise.all(['todo api', 'url shortener', 'chat server'].map((prompt) => client.stream.generate({ prompt, language: 'javascript' }).result));
    expect(new Set(results.map((r) => r.id)).size).toBe(3);
  });

  it('a bad credential is refused with 401', async () => {
    const stranger = clientFor(t, { apiKey: 'cl_live_0000000000000000000000000000' });
    const error = await stranger.stream.generate({ prompt: 'x' }).result.catch(fail);
    expect(error).toMatchObject({ status: 401 });
    expect(['invalid_token', 'unauthorized']).toContain(error.code);
  });
});

describe('runs.watch', () => {
  let t: TestServer;
  let fake: FakeVendor;
  let client: Codeloom;
  beforeAll(async () => {
    fake = await startOpenAIFake({ script: { hang: true } });
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'slow-model', CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_RUNS_TOTAL: '1' } });
    client = (await newUser(t)).client;
  });
  afterAll(async () => { await t.close(); await fake.close(); });

  it('streams a workflow run from the start: run_started, steps, tokens, complete; result is the run', async () => {
    // Hold the server's only run slot with a run on the never-answering model, so the run we watch
    // waits `queued` until we are subscribed.
    const slow = await client.workflows.create({ name: 'holder', agents: [{ type: 'coder', model: 'slow-model' }] });
    const holder = await client.workflows.execute(slow.id, { task: 'hold the slot' });
    await eventually(async () => ((await client.runs.get(holder.id)).status === 'running' ? true : undefined));

    const wf = await client.workflows.create({ name: 'team', agents: [{ type: 'planner' }, { type: 'coder' }, { type: 'tester' }] });
    const run = await client.workflows.execute(wf.id, { task: 'CLI that counts words', language: 'python' });
    expect(run.status).toBe('queued');
    const watch = client.runs.watch(run.id);
    const events: RunEvent[] = [];
    const collected = (async () => { for await (const event of watch) events.push(event); })();
    await new Promise((r) => setTimeout(r, 500)); // connected and subscribed
    await client.runs.cancel(holder.id);
    await collected;

    const final = await watch.result;
    expect(final.id).toBe(run.id);
    expect(final.status).toBe('succeeded');
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('run_started');
    expect(names.at(-1)).toBe('complete');
    expect(names.filter((n) => n === 'step_started')).toHaveLength(3);
    expect(names.filter((n) => n === 'step_completed')).toHaveLength(3);
    const tokens = events.filter((e): e is Extract<RunEvent, { event: 'token' }> => e.event === 'token');
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens.every((e) => typeof e.step === 'number' && typeof e.data === 'string')).toBe(true);
    const started = events.filter((e): e is Extract<RunEvent, { event: 'step_started' }> => e.event === 'step_started');
    expect(started.map((e) => e.data.agent)).toEqual(['planner', 'coder', 'tester']);
    // The tokens of each step add up to its output.
    for (const step of final.steps) expect(tokens.filter((e) => e.step === step.index).map((e) => e.data).join('')).toBe(step.output);
    expect(events.every((e) => e.id === run.id)).toBe(true);
  });

  it('watching right after execute, or after the end, replays every event once; `after` resumes; an unknown run is not_found', async () => {
    const wf = await client.workflows.create({ name: 'duo', agents: [{ type: 'planner' }, { type: 'coder' }] });
    const run = await client.workflows.execute(wf.id, { task: 'hello world' });
    const first: RunEvent[] = [];
    for await (const e of client.runs.watch(run.id)) first.push(e);
    expect(first[0]!.event).toBe('run_started');
    expect(first.filter((e) => e.event === 'step_started').map((e) => (e as Extract<RunEvent, { event: 'step_started' }>).data.agent)).toEqual(['planner', 'coder']);
    expect(first.map((e) => e.seq)).toEqual(first.map((_, i) => i + 1));
    const again = client.runs.watch(run.id);
    const events: RunEvent[] = [];
    for await (const e of again) events.push(e);
    expect(events).toEqual(first);
    expect((await again.result).status).toBe('succeeded');
    const resumed: RunEvent[] = [];
    for await (const e of client.runs.watch(run.id, { after: 3 })) resumed.push(e);
    expect(resumed).toEqual(first.slice(3));

    const missing = client.runs.watch('run_doesnotexist');
    expect(await missing.result.catch(fail)).toMatchObject({ status: 404, code: 'not_found' });
    const iterated = await (async () => { for await (const _ of client.runs.watch('run_doesnotexist')) { /* none */ } })().catch(fail);
    expect(iterated).toMatchObject({ code: 'not_found' });
  });

  it('a cancelled run ends with its error event and resolves with the cancelled run', async () => {
    const wf = await client.workflows.create({ name: 'slow', agents: [{ type: 'coder', model: 'slow-model' }] });
    const run = await client.workflows.execute(wf.id, { task: 'a large REST API' });
    const watch = client.runs.watch(run.id);
    const events: RunEvent[] = [];
    const done = (async () => { for await (const e of watch) events.push(e); })();
    await eventually(async () => ((await client.runs.get(run.id)).status === 'running' ? true : undefined));
    await client.runs.cancel(run.id);
    await done;
    const final = await watch.result;
    expect(final.status).toBe('cancelled');
    const last = events.at(-1) as Extract<RunEvent, { event: 'error' }>;
    expect(last.event).toBe('error');
    expect(last.data).toMatchObject({ status: 499, code: 'cancelled' });
    expect(last.data.run!.id).toBe(run.id);
  });

  it('close() and breaking out of the loop stop watching', async () => {
    const wf = await client.workflows.create({ name: 'w', agents: [{ type: 'coder' }] });
    const run = await client.workflows.execute(wf.id, { task: 'todo api' });
    const watch = client.runs.watch(run.id);
    watch.close();
    expect(await watch.result.catch(fail)).toMatchObject({ code: 'cancelled' });
    for await (const _ of client.runs.watch(run.id)) break; // must not hang
  });
});

describe('runs.watch across a dropped connection', () => {
  let t: TestServer;
  let fake: FakeVendor;
  const sockets: WebSocket[] = [];
  /** The `ws` client, keeping every socket the SDK opens so the test can cut one. */
  class TrackedWebSocket extends WebSocket {
    constructor(...args: ConstructorParameters<typeof WebSocket>) {
      super(...args);
      sockets.push(this);
    }
  }
  beforeAll(async () => {
    fake = await startOpenAIFake({ script: { reply: WORDS.join(''), chunkDelayMs: 10 } });
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'slow-model', CODELOOM_DEFAULT_MODEL: 'sandbox' } });
  });
  afterAll(async () => { await t.close(); await fake.close(); });

  it('reconnects and resumes after the last seq: every event once, in order', async () => {
    const { client } = await newUser(t, { WebSocket: TrackedWebSocket as unknown as typeof WebSocket });
    const wf = await client.workflows.create({ name: 'slow', agents: [{ type: 'planner' }, { type: 'coder', model: 'slow-model' }] });
    const run = await client.workflows.execute(wf.id, { task: 'a todo API' });
    const watch = client.runs.watch(run.id);
    const events: RunEvent[] = [];
    for await (const e of watch) {
      events.push(e);
      if (events.filter((x) => x.event === 'token' && x.step === 1).length === 20) sockets[0]!.terminate();
    }
    expect(sockets.length).toBe(2);
    const final = await watch.result;
    expect(final.status).toBe('succeeded');
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.event === 'token' && e.step === 1).map((e) => (e as { data: string }).data).join('')).toBe(final.steps[1]!.output);
    expect(events.at(-1)!.event).toBe('complete');
  });
});
