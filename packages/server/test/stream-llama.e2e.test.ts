import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNodeLlamaCpp } from '../src/providers/llama/llama-provider.js';
import { writeTinyGguf } from '../src/providers/llama/tiny-gguf.js';
import { startTestServer, nextIp, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';

const installed = Boolean(await loadNodeLlamaCpp());
if (!installed) console.log('skipping the embedded-model channel test: node-llama-cpp is not installed (run node scripts/install-llama.mjs)');

/** The embedded llama.cpp model (`local`) behind /generate and the WebSocket channel, on a tiny random-weight GGUF made here. */
describe.skipIf(!installed)('the embedded model over HTTP and the channel', () => {
  let t: TestServer;
  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'codeloom-gguf-')), 'tiny.gguf');
    await writeTinyGguf(file, { seed: 7 });
    t = await startTestServer({ env: { CODELOOM_LLAMA_MODEL: file } });
  }, 60_000);
  afterAll(async () => { await t?.close(); });

  it('is listed as model local and the default', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    const models = await request(`${t.url}/api/v1/models`, { token: u.token });
    expect(models.body.default).toBe('local');
    expect(models.body.data.find((m: { id: string }) => m.id === 'local')).toMatchObject({ provider: 'llama' });
  });

  it('streams tokens over the channel whose concatenation equals the result output', async () => {
    const u = await registerUser(t.url, { ip: nextIp() });
    const ws = new WebSocket(`${t.url.replace('http', 'ws')}/api/v1/stream`, { headers: { authorization: `Bearer ${u.token}` } });
    const frames: Array<{ event: string; id?: string; data?: any }> = [];
    await new Promise<void>((resolve, reject) => {
      ws.on('message', (raw) => {
        const f = JSON.parse(String(raw));
        frames.push(f);
        if (f.event === 'connected') ws.send(JSON.stringify({ type: 'generate', id: 'l1', prompt: 'hello', model: 'local', max_tokens: 24 }));
        if (f.event === 'complete' || f.event === 'error') resolve();
      });
      ws.on('error', reject);
    });
    ws.close();
    const end = frames.at(-1)!;
    expect(end.event, JSON.stringify(end.data)).toBe('complete');
    const tokens = frames.filter((f) => f.event === 'token' && f.id === 'l1').map((f) => f.data as string);
    expect(tokens.join('')).toBe(end.data.output);
    expect(end.data.model).toBe('local');
    expect(end.data.usage.completion_tokens).toBeGreaterThan(0);
    expect(end.data.usage.completion_tokens).toBeLessThanOrEqual(24);
  }, 60_000);
});
