/**
 * The sandbox switch. The server's default model here is an OpenAI-compatible
 * fake, so a production generation says `gpt-test` and only the sandbox
 * header turns it into `sandbox`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from '../../server/test/fakes/openai-fake.js';
import type { FakeVendor } from '../../server/test/fakes/fake-vendor.js';
import { Codeloom, CodeloomError, type RunEvent } from '../src/index.js';
import { WebSocket, clientFor, eventually, newUser, recordingFetch, startTestServer, type TestServer } from './helpers.js';

const REPLY = 'Done.\n\n```typescript src/index.ts\nexport const x = 1;\n```\n';

describe('environment: "sandbox"', () => {
  let t: TestServer;
  let fake: FakeVendor;

  beforeAll(async () => {
    fake = await startOpenAIFake({ script: { reply: REPLY } });
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_DEFAULT_MODEL: 'gpt-test', CODELOOM_RUNS_TOTAL: '1' } });
  });
  afterAll(async () => { await t.close(); await fake.close(); });

  it('sends X-Environment: sandbox on every request; generations use the sandbox model', async () => {
    const { client: prod, session, ip } = await newUser(t);
    const rec = recordingFetch();
    const sandbox = clientFor(t, { accessToken: session.accessToken, refreshToken: session.refreshToken }, { environment: 'sandbox', fetch: rec.fetch }, ip);
    expect(sandbox.environment).toBe('sandbox');

    expect((await sandbox.verify()).credential.environment).toBe('sandbox');
    expect((await sandbox.user.profile()).environment).toBe('sandbox');
    const result = await sandbox.generate({ prompt: 'REST API for todos', language: 'typescript' });
    expect(result.model).toBe('sandbox');
    expect(result.files.length).toBeGreaterThan(0);
    expect(rec.calls.length).toBe(3);
    for (const call of rec.calls) expect(call.headers['x-environment']).toBe('sandbox');

    // Production: no header, the configured default model.
    const prodRec = recordingFetch();
    const prodClient = clientFor(t, { accessToken: session.accessToken }, { fetch: prodRec.fetch }, ip);
    expect((await prodClient.generate({ prompt: 'REST API for todos' })).model).toBe('gpt-test');
    expect(prodRec.calls[0]!.headers['x-environment']).toBeUndefined();
    expect((await prod.verify()).credential.environment).toBe('production');

    // Resources are kept apart.
    const sbProject = await sandbox.projects.create({ name: 'sandbox only' });
    expect((await prod.projects.list().toArray()).map((p) => p.id)).not.toContain(sbProject.id);
    expect(await prod.projects.get(sbProject.id).catch((e: unknown) => e as CodeloomError)).toMatchObject({ status: 404 });
    expect((await sandbox.generations.list().toArray()).map((g) => g.id)).toEqual([result.id]);
  });

  it('withOptions({ environment: "sandbox" }) and a cl_test_ key both reach the sandbox', async () => {
    const { client, ip } = await newUser(t);
    expect((await client.withOptions({ environment: 'sandbox' }).generate({ prompt: 'hello' })).model).toBe('sandbox');
    const key = await client.apiKeys.create({ name: 'test key', environment: 'sandbox' });
    expect(key.key).toMatch(/^cl_test_/);
    const keyClient = clientFor(t, { apiKey: key.key }, {}, ip);
    expect((await keyClient.verify()).credential.environment).toBe('sandbox');
    expect((await keyClient.generate({ prompt: 'hello' })).model).toBe('sandbox');
  });

  it('stream.generate in the sandbox (the ws package carries the header on the upgrade)', async () => {
    const { session, ip } = await newUser(t);
    const sandbox = clientFor(t, { accessToken: session.accessToken }, { environment: 'sandbox', WebSocket }, ip);
    const stream = sandbox.stream.generate({ prompt: 'word counter CLI', language: 'python' });
    let text = '';
    for await (const token of stream) text += token;
    const result = await stream.result;
    expect(result.model).toBe('sandbox');
    expect(text).toBe(result.output);
    const prodStream = clientFor(t, { accessToken: session.accessToken }, { WebSocket }, ip).stream.generate({ prompt: 'x' });
    expect((await prodStream.result).model).toBe('gpt-test');
  });

  it('stream.generate and runs.watch in the sandbox over a WebSocket that cannot send headers (a browser\'s, Node 22\'s): the auth frame names the environment', async () => {
    // Like the browser's WebSocket: the third argument (the `ws` package's options, with X-Environment) is dropped.
    const frames: unknown[] = [];
    class HeaderlessWebSocket extends WebSocket {
      constructor(url: string) {
        super(url);
        const send = this.send.bind(this);
        this.send = ((data: string) => { frames.push(JSON.parse(String(data))); send(data); }) as typeof this.send;
      }
    }
    const { session, ip } = await newUser(t);
    const sandbox = clientFor(t, { accessToken: session.accessToken }, { environment: 'sandbox', WebSocket: HeaderlessWebSocket as unknown as typeof WebSocket }, ip);
    const stream = sandbox.stream.generate({ prompt: 'word counter CLI', language: 'python' });
    for await (const _ of stream) { /* drain */ }
    expect((await stream.result).model).toBe('sandbox');
    expect(frames[0]).toMatchObject({ type: 'auth', environment: 'sandbox' });

    // A sandbox run is found (a production connection would answer 404) and watched to its end.
    const wf = await sandbox.workflows.create({ name: 'headerless', agents: [{ type: 'coder' }] });
    const run = await sandbox.workflows.execute(wf.id, { task: 'hello world' });
    const final = await sandbox.runs.watch(run.id).result;
    expect(final).toMatchObject({ id: run.id, status: 'succeeded' });

    const prod = clientFor(t, { accessToken: session.accessToken }, { WebSocket: HeaderlessWebSocket as unknown as typeof WebSocket }, ip);
    expect((await prod.stream.generate({ prompt: 'x' }).result).model).toBe('gpt-test');
    expect(frames.at(-2)).toEqual({ type: 'auth', token: session.accessToken });

    // In production the frame names no environment, as HTTP sends no header: a cl_test_ key still streams in the sandbox.
    const key = await clientFor(t, { accessToken: session.accessToken }, {}, ip).apiKeys.create({ name: 'test key', environment: 'sandbox' });
    const keyClient = clientFor(t, { apiKey: key.key }, { WebSocket: HeaderlessWebSocket as unknown as typeof WebSocket }, ip);
    expect((await keyClient.stream.generate({ prompt: 'x' }).result).model).toBe('sandbox');
  });

  it('runs.watch on a sandbox workflow run', async () => {
    const { session, ip } = await newUser(t);
    const sandbox = clientFor(t, { accessToken: session.accessToken }, { environment: 'sandbox' }, ip);
    const prod = clientFor(t, { accessToken: session.accessToken }, {}, ip);
    // The server runs one run at a time here: a production run on the (now never-answering) provider holds
    // the slot, so the sandbox run waits queued until we are subscribed.
    fake.script({ hang: true });
    const holderWf = await prod.workflows.create({ name: 'holder', agents: [{ type: 'coder' }] });
    const holder = await prod.workflows.execute(holderWf.id, { task: 'hold the slot' });
    await eventually(async () => ((await prod.runs.get(holder.id)).status === 'running' ? true : undefined));

    const wf = await sandbox.workflows.create({ name: 'sandbox team', agents: [{ type: 'planner' }, { type: 'coder' }, { type: 'reviewer' }, { type: 'documenter' }], config: { max_iterations: 1 } });
    const upstreamBefore = fake.requests.length;
    const run = await sandbox.workflows.execute(wf.id, { task: 'REST API for todos', requirements: { framework: 'fastify', database: 'sqlite' } });
    expect(run.status).toBe('queued');
    const watch = sandbox.runs.watch(run.id);
    const events: RunEvent[] = [];
    const collected = (async () => { for await (const event of watch) events.push(event); })();
    await new Promise((r) => setTimeout(r, 500)); // connected and subscribed
    await prod.runs.cancel(holder.id);
    fake.script({ hang: false });
    await collected;

    const final = await watch.result;
    expect(final.status).toBe('succeeded');
    expect(events[0]).toMatchObject({ event: 'run_started', id: run.id });
    expect(events.at(-1)).toMatchObject({ event: 'complete', id: run.id });
    expect(events.filter((e) => e.event === 'step_completed').length).toBe(final.steps.length);
    expect(final.result!.files.map((f) => f.path)).toContain('README.md');
    // Served by the sandbox model: nothing went to the configured provider. (The step records still name
    // the workflow's model, gpt-test: a server inconsistency reported separately.)
    expect(fake.requests.length).toBe(upstreamBefore);
    expect(final.steps.every((s) => s.status === 'succeeded')).toBe(true);
    // The production side of the same account does not see the sandbox run.
    expect(await prod.runs.get(run.id).catch((e: unknown) => e as CodeloomError)).toMatchObject({ status: 404 });
  });

  it('rejects an unknown environment', () => {
    expect(() => new Codeloom(null, { environment: 'staging' as never })).toThrow(TypeError);
  });
});
