// The WebSocket channel: 1,000 concurrent streams, per-token server cost, tokens/s,
// and server memory while a client reads slowly compared to one that reads at once.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import WebSocket from 'ws';
import { cpuMicros, json, printTable, root, rssMiB, startCodeloom } from './lib.mjs';

const PROMPT = { type: 'generate', prompt: 'REST API for todos', language: 'typescript', context: { framework: 'fastify', includeTests: true } };

async function enterpriseKeys(server, count) {
  const users = [];
  for (let i = 0; i < count; i++) {
    const email = `bench-ws-${i}@example.com`;
    const reg = await json(`${server.url}/api/v1/auth/register`, { method: 'POST', headers: { 'x-forwarded-for': `10.77.0.${i + 1}` }, body: JSON.stringify({ email, password: 'bench password', name: 'Bench' }) });
    users.push({ email, token: reg.body.token });
  }
  for (const u of users) {
    const r = spawnSync(process.execPath, [join(root, 'packages/cli/dist/main.js'), 'admin', 'set-plan', u.email, 'enterprise'], { env: { ...process.env, CODELOOM_DATA_DIR: server.dataDir }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
  }
  await new Promise((r) => setTimeout(r, 1100));
  return users.map((u) => u.token);
}

function connect(url, token) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace('http', 'ws')}/api/v1/stream`, { headers: { authorization: `Bearer ${token}` } });
    ws.once('message', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** Sends `count` generations on one socket; resolves with tokens received once every one completed. */
function runGenerations(ws, count, prefix) {
  return new Promise((resolve, reject) => {
    let done = 0;
    let tokens = 0;
    ws.on('message', (raw) => {
      const f = JSON.parse(raw);
      if (f.event === 'token') tokens++;
      else if (f.event === 'complete') { if (++done === count) resolve(tokens); }
      else if (f.event === 'error') reject(new Error(JSON.stringify(f.data)));
    });
    for (let i = 0; i < count; i++) ws.send(JSON.stringify({ ...PROMPT, id: `${prefix}-${i}` }));
  });
}

export async function benchStream({ streams = Number(process.env.BENCH_STREAMS ?? 1000) } = {}) {
  const server = await startCodeloom({ CODELOOM_WS_MAX_CONCURRENT: '128' });
  const pid = server.child.pid;
  try {
    const tokens = await enterpriseKeys(server, 10);
    // Model-only cost: the sandbox model generating the same output in this process, for subtraction.
    const { createSandboxProvider } = await import(join(root, 'packages/server/dist/providers/sandbox/sandbox-provider.js'));
    const model = createSandboxProvider();
    const call = { model: 'sandbox', messages: [{ role: 'user', content: PROMPT.prompt }], hints: { language: 'typescript', context: PROMPT.context } };
    let modelTokens = 0;
    const m0 = process.cpuUsage();
    for (let i = 0; i < 300; i++) for await (const part of model.stream(call)) if (part.type === 'text') modelTokens++;
    const mu = process.cpuUsage(m0);
    const modelPerToken = (mu.user + mu.system) / modelTokens;

    // 1,000 concurrent streams: 10 accounts × 100 connections, one generation each.
    const sockets = [];
    for (let i = 0; i < streams; i++) sockets.push(await connect(server.url, tokens[i % 10]));
    const cpu0 = cpuMicros(pid);
    const t0 = performance.now();
    const results = await Promise.allSettled(sockets.map((ws, i) => runGenerations(ws, 1, `s${i}`)));
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuMicros(pid) - cpu0;
    const completed = results.filter((r) => r.status === 'fulfilled').length;
    const delivered = results.reduce((n, r) => n + (r.status === 'fulfilled' ? r.value : 0), 0);
    for (const ws of sockets) ws.terminate();
    printTable(`${streams} concurrent WebSocket streams (sandbox model)`, [{
      streams, completed, lost: streams - completed, tokens: delivered, 'seconds': seconds.toFixed(2),
      'tokens/s': Math.round(delivered / seconds), 'server CPU µs/token': (cpu / delivered).toFixed(1),
      'model µs/token': modelPerToken.toFixed(1), 'overhead µs/token (target ≤ 50)': (cpu / delivered - modelPerToken).toFixed(1),
    }]);

    // Memory: the same load, read at once vs read by a client that stops reading for 3 s.
    const memoryRun = async (slow) => {
      const ws = await connect(server.url, tokens[0]);
      const baseline = rssMiB(pid);
      let peak = baseline;
      const sampler = setInterval(() => { peak = Math.max(peak, rssMiB(pid)); }, 50);
      if (slow) { ws._socket.pause(); setTimeout(() => ws._socket.resume(), 3000); }
      const runs = [];
      for (let round = 0; round < 2; round++) runs.push(runGenerations(ws, 60, `${slow ? 'slow' : 'fast'}${round}`));
      await Promise.all(runs);
      clearInterval(sampler);
      ws.terminate();
      return { baseline, peak };
    };
    await memoryRun(false); // warm-up
    const fast = await memoryRun(false);
    const slow = await memoryRun(true);
    printTable('Server resident memory, 120 concurrent generations on one socket (target: slow within 20 % of fast)', [
      { reader: 'fast', 'RSS before MiB': fast.baseline.toFixed(1), 'peak MiB': fast.peak.toFixed(1) },
      { reader: 'slow (paused 3 s)', 'RSS before MiB': slow.baseline.toFixed(1), 'peak MiB': slow.peak.toFixed(1), 'peak vs fast': `${((slow.peak / fast.peak) * 100).toFixed(1)} %` },
    ]);
    return { completed, delivered, seconds, cpu, modelPerToken, fast, slow };
  } finally {
    await server.stop();
  }
}
