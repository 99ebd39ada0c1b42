import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { spawnServer } from './helpers/spawn-server.js';
import { registerUser, request } from './helpers/http.js';

/** SIGTERM drains: in-flight requests finish, new ones are refused, storage closes, the process exits 0, nothing written is lost. */
describe('graceful shutdown of the server process', () => {
  let fake: FakeVendor;
  beforeAll(async () => { fake = await startOpenAIFake(); });
  afterAll(async () => { await fake.close(); });

  it('finishes the request in flight, then exits 0 with its data kept', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'codeloom-shutdown-'));
    const env = { CODELOOM_DATA_DIR: dataDir, OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'k', CODELOOM_OPENAI_MODELS: 'slow' };
    const server = await spawnServer(env);
    const u = await registerUser(server.url, { ip: '10.3.0.1' });
    fake.script({ reply: '```ts a.ts\nexport const a = 1;\n```\n', chunks: ['```ts a.ts\n', 'export const a = 1;\n', '```\n'], chunkDelayMs: 300 });
    const inFlight = request(`${server.url}/api/v1/generate`, { token: u.token, body: { prompt: 'slow one', model: 'slow' } });
    await new Promise((r) => setTimeout(r, 200));
    const exited = server.stop('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    const late = await fetch(`${server.url}/healthz`).then((r) => r.status, () => 'refused');
    expect([503, 'refused']).toContain(late);
    const finished = await inFlight;
    expect(finished.status).toBe(200);
    expect(finished.body.files[0].path).toBe('a.ts');
    expect(await exited).toBe(0);

    // Restart on the same data: the account, and the generation finished during the drain, are there.
    const again = await spawnServer(env);
    try {
      const login = await request(`${again.url}/api/v1/auth/login`, { body: { email: u.email, password: u.password }, headers: { 'x-forwarded-for': '10.3.0.2' } });
      expect(login.status).toBe(200);
      const history = await request(`${again.url}/api/v1/generations`, { token: login.body.token });
      expect(history.body.data.map((g: { id: string }) => g.id)).toContain(finished.body.id);
    } finally {
      await again.stop();
    }
  }, 30_000);

  it('says "listening" once at start and "stopped" after a graceful stop; during the drain new connections are refused', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'codeloom-shutdown-'));
    const env = { CODELOOM_DATA_DIR: dataDir, OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'k', CODELOOM_OPENAI_MODELS: 'slow', LOG_LEVEL: 'info', HOST: '0.0.0.0' };
    const server = await spawnServer(env);
    const u = await registerUser(server.url, { ip: '10.3.0.3' });
    fake.script({ reply: '```ts a.ts\nexport const a = 1;\n```\n', chunks: ['```ts a.ts\n', 'export const a = 1;\n', '```\n'], chunkDelayMs: 400 });
    const inFlight = request(`${server.url}/api/v1/generate`, { token: u.token, body: { prompt: 'slow one', model: 'slow' } });
    await new Promise((r) => setTimeout(r, 200));
    const exited = server.stop('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    // The port is closed while the request in flight finishes: a new connection is refused, not answered 503.
    expect(await fetch(`${server.url}/healthz`).then((r) => r.status, (e: Error & { cause?: { code?: string } }) => e.cause?.code ?? 'error')).toBe('ECONNREFUSED');
    expect((await inFlight).status).toBe(200);
    expect(await exited).toBe(0);
    const lines = server.output().split('\n');
    expect(lines.filter((l) => /listening/i.test(l)), server.output()).toEqual([expect.stringMatching(/^Codeloom listening on http:\/\/[\d.]+:\d+ \(storage: sqlite(, all interfaces \(0\.0\.0\.0:\d+\))?\)$/)]);
    expect(lines.filter((l) => /stopped/i.test(l))).toEqual(['Codeloom stopped']);
  }, 30_000);

  it('refuses to start with a bad setting and lists every problem', async () => {
    await expect(spawnServer({ PORT: 'eighty', CODELOOM_ACCESS_TOKEN_TTL: '-5' })).rejects.toThrow(/PORT: must be an integer[\s\S]*CODELOOM_ACCESS_TOKEN_TTL: must be ≥ 1/);
  });
});
