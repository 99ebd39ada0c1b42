import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { spawnServer, type SpawnedServer } from './helpers/spawn-server.js';
import { registerUser, request } from './helpers/http.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SLOW = { reply: 'word '.repeat(3_000), chunkDelayMs: 50 };
const FAST = { reply: 'Done.\n\n```typescript src/done.ts\nexport const done = true;\n```\n', chunkDelayMs: 0 };

/**
 * A server stopped during a run (SIGTERM, or killed outright) must not leave
 * the run `running` forever: after the restart it is `failed` with code
 * `interrupted`, its finished steps kept; runs still `queued` start again.
 * Uses the built server (`npx tsc -b packages/cli`) with a file SQLite database.
 */
describe('runs across a server restart', () => {
  let fake: FakeVendor;
  let dataDir: string;
  let env: Record<string, string>;
  let server: SpawnedServer | undefined;
  let token: string;
  let workflow: string;

  const api = (path: string) => `${server!.url}/api/v1${path}`;
  const getRun = async (id: string) => {
    const res = await request(api(`/runs/${id}`), { token });
    expect(res.status).toBe(200);
    return res.body;
  };
  const execute = async (task: string) => {
    const res = await request(api(`/workflows/${workflow}/execute`), { token, body: { task } });
    expect(res.status).toBe(202);
    return res.body.id as string;
  };
  const waitFor = async (id: string, until: (run: any) => boolean, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const run = await getRun(id);
      if (until(run)) return run;
      if (Date.now() > deadline) throw new Error(`run ${id} never got there: ${JSON.stringify(run).slice(0, 500)}\n${server!.output()}`);
      await sleep(100);
    }
  };
  /** Starts a run whose model step streams slowly and waits until that step is running upstream. */
  const startSlowRun = async () => {
    fake.reset();
    fake.script(SLOW);
    const id = await execute('REST API for todos');
    await waitFor(id, (r) => r.steps[1].status === 'running');
    while (fake.requests.length === 0) await sleep(20);
    await sleep(200);
    return id;
  };
  const expectInterrupted = (run: any) => {
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'interrupted', message: expect.any(String), step: 1 });
    expect(run.finished_at).toBeTruthy();
    expect(run.steps.map((s: any) => s.status)).toEqual(['succeeded', 'failed', 'skipped']);
    expect(run.steps[0].output).toMatch(/^1\. /m);
    expect(run.steps[1].error.code).toBe('interrupted');
    expect(run.steps[1].finished_at).toBeTruthy();
    expect(run.result).toBeNull();
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'codeloom-restart-'));
    fake = await startOpenAIFake();
    env = {
      CODELOOM_DATA_DIR: dataDir, OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-x', CODELOOM_OPENAI_MODELS: 'gpt-slow',
      CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_UPSTREAM_RETRIES: '0', CODELOOM_RUNS_PER_ACCOUNT: '1', CODELOOM_SHUTDOWN_TIMEOUT: '20',
    };
    server = await spawnServer(env);
    token = (await registerUser(server.url, { ip: '10.77.0.1' })).token;
    const wf = await request(api('/agents/create'), { token, body: { name: 'restart', agents: [{ type: 'planner', model: 'sandbox' }, { type: 'coder', model: 'gpt-slow' }, { type: 'tester', model: 'sandbox' }] } });
    expect(wf.status).toBe(201);
    workflow = wf.body.id;
  }, 60_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await fake?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('SIGTERM mid-run: the run is checkpointed failed/interrupted, the upstream call aborted, a queued run starts again', async () => {
    const running = await startSlowRun();
    const queued = await execute('CLI for notes');
    expect((await getRun(queued)).status).toBe('queued');

    const stoppedAt = Date.now();
    const code = await server!.stop('SIGTERM');
    expect(code, server!.output()).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(15_000);
    await fake.waitForAborts(1, 3_000);

    fake.reset();
    fake.script(FAST);
    server = await spawnServer(env);
    expectInterrupted(await getRun(running));
    // The queued run was not lost: it runs now, to the end.
    const again = await waitFor(queued, (r) => ['succeeded', 'failed', 'cancelled'].includes(r.status));
    expect(again.status).toBe('succeeded');
    expect(again.result.files.map((f: any) => f.path)).toContain('src/done.ts');
    // Finished runs are left alone by the restart.
    const list = (await request(api('/runs'), { token })).body;
    expect(list.data.map((r: any) => r.status).sort()).toEqual(['failed', 'succeeded']);
  });

  it('SIGKILL mid-run: at the next start the run is failed/interrupted, not running', async () => {
    const running = await startSlowRun();
    expect((await getRun(running)).status).toBe('running');
    await server!.stop('SIGKILL');
    fake.reset();
    fake.script(FAST);
    server = await spawnServer(env);
    const run = await getRun(running);
    expectInterrupted(run);
    // A cancel of the interrupted run is a conflict, and new runs work.
    expect((await request(api(`/runs/${running}/cancel`), { token, method: 'POST' })).status).toBe(409);
    const next = await execute('REST API for notes');
    expect((await waitFor(next, (r) => r.status !== 'queued' && r.status !== 'running')).status).toBe('succeeded');
  });
});
