import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { spawnServer } from './helpers/spawn-server.js';
import { registerUser, request } from './helpers/http.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Reads an SSE response to its end: every event's name and JSON frame. */
async function readAll(res: Response): Promise<Array<{ event: string; frame: any }>> {
  const text = await res.text().catch(() => '');
  return text.split('\n\n').filter((b) => /^data: /m.test(b)).map((block) => ({
    event: /^event: (.*)$/m.exec(block)?.[1] ?? 'message',
    frame: JSON.parse(block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')),
  }));
}

/**
 * SIGTERM with a drain longer than CODELOOM_SHUTDOWN_TIMEOUT: runs are
 * checkpointed first, every open SSE stream ends with an `error` event
 * (`shutting_down`, or the run's own end) instead of being cut, and no run is
 * left `running` in the database (read directly, with no restart).
 */
describe('draining past the shutdown timeout', () => {
  let fake: FakeVendor;
  let dataDir: string;
  beforeAll(async () => {
    fake = await startOpenAIFake();
    dataDir = mkdtempSync(join(tmpdir(), 'codeloom-drain-'));
  });
  afterAll(async () => {
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('ends every SSE stream with an error event and leaves no run running', async () => {
    const server = await spawnServer({
      CODELOOM_DATA_DIR: dataDir, OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'k', CODELOOM_OPENAI_MODELS: 'stuck',
      CODELOOM_UPSTREAM_RETRIES: '0', CODELOOM_RUNS_PER_ACCOUNT: '1', CODELOOM_SHUTDOWN_TIMEOUT: '1',
    });
    const { token } = await registerUser(server.url, { ip: '10.44.0.1' });
    const auth = { authorization: `Bearer ${token}` };
    // Every model call streams three pieces, then goes silent with its socket open.
    fake.script({ reply: 'one two three four five six', chunks: ['one ', 'two ', 'three ', 'four'], hangAfterChunks: 3 });
    const agent = (await request(`${server.url}/api/v1/agents`, { token, body: { name: 'c', model: 'stuck', config: { specialization: 'coder' } } })).body.id;
    const running = (await request(`${server.url}/api/v1/agents/${agent}/execute`, { token, body: { task: 'first' } })).body.id;
    const queued = (await request(`${server.url}/api/v1/agents/${agent}/execute`, { token, body: { task: 'second' } })).body.id;
    while (fake.requests.length < 1) await sleep(20);
    const runStream = readAll(await fetch(`${server.url}/api/v1/runs/${running}/events`, { headers: auth }));
    const queuedStream = readAll(await fetch(`${server.url}/api/v1/runs/${queued}/events`, { headers: auth }));
    const generateStream = readAll(await fetch(`${server.url}/api/v1/generate`, {
      method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hangs', model: 'stuck', stream: true }),
    }));
    while (fake.requests.length < 2) await sleep(20);
    await sleep(200);

    expect(await server.stop('SIGTERM')).toBe(1); // the drain timed out
    const [run, waiting, generate] = await Promise.all([runStream, queuedStream, generateStream]);
    // The run's own end (checkpointed first), or, if the machine was too slow for even that within the timeout, shutting_down.
    expect(run.at(-1)).toMatchObject({ event: 'error', frame: { id: running } });
    expect(['interrupted', 'shutting_down']).toContain(run.at(-1)!.frame.data.code);
    expect(waiting.at(-1)).toMatchObject({ event: 'error', frame: { id: queued, data: { status: 503, code: 'shutting_down' } } });
    expect(generate.filter((e) => e.event === 'token').length).toBeGreaterThan(0);
    expect(generate.at(-1)).toMatchObject({ event: 'error', frame: { data: { status: 503, code: 'shutting_down' } } });

    const db = new Database(join(dataDir, 'codeloom.db'), { readonly: true });
    try {
      const rows = db.prepare('select id, status, error from runs').all() as Array<{ id: string; status: string; error: string | null }>;
      expect(rows.filter((r) => r.status === 'running')).toEqual([]);
      expect(rows.find((r) => r.id === running)).toMatchObject({ status: 'failed' });
      expect(JSON.parse(rows.find((r) => r.id === running)!.error!).code).toBe('interrupted');
      // A queued run stays queued for the next start.
      expect(rows.find((r) => r.id === queued)!.status).toBe('queued');
    } finally {
      db.close();
    }
  }, 30_000);
});
