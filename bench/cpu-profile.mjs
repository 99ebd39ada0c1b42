// Profiles the built server under load: `node bench/cpu-profile.mjs [generate|sse|profile] [seconds]`.
// Starts the server with --cpu-prof, drives autocannon at 50 connections, stops it, and prints the
// top frames by self time (the .cpuprofile is kept for a flame-graph viewer, e.g. Chrome DevTools).
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIfNeeded } from '../scripts/build-if-needed.mjs';
import { HEAP_FLAGS } from '../scripts/heap-flags.mjs';
import { enterpriseUser, load, root, sequentialLatency, startProcess } from './lib.mjs';

buildIfNeeded();
const scenario = process.argv[2] ?? 'generate';
const duration = Number(process.argv[3] ?? 8);
const top = Number(process.env.PROFILE_TOP ?? 30);
const profDir = mkdtempSync(join(tmpdir(), 'codeloom-prof-'));
const dataDir = mkdtempSync(join(tmpdir(), 'codeloom-bench-'));
const upstream = await startProcess(join(root, 'bench/openai-upstream.mjs'));
const server = await startProcess(join(root, 'packages/server/dist/main.js'), {
  CODELOOM_DATA_DIR: dataDir, CODELOOM_ARGON2_MEMORY_KIB: '4096', LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'bench', CODELOOM_OPENAI_MODELS: 'bench-model',
}, []);
// Restart under the profiler is simpler than attaching: spawn again with --cpu-prof on the same data dir.
await server.stop();
const { spawn } = await import('node:child_process');
const child = spawn(process.execPath, [...HEAP_FLAGS, '--cpu-prof', `--cpu-prof-dir=${profDir}`, join(root, 'packages/server/dist/main.js')], {
  env: { ...process.env, HOST: '127.0.0.1', PORT: '0', CODELOOM_DATA_DIR: dataDir, CODELOOM_ARGON2_MEMORY_KIB: '4096', LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'bench', CODELOOM_OPENAI_MODELS: 'bench-model' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise((resolve) => {
  let out = '';
  child.stdout.on('data', (d) => { out += d; const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(out); if (m) resolve(m[1]); });
});
child.stdout.resume();
// Enterprise allows 100,000 requests an hour per account; the profile runs faster than that, so each connection cycles through four.
const keys = [];
for (let i = 0; i < (scenario === 'profile' ? 4 : 1); i++) keys.push((await enterpriseUser({ url, dataDir }, `bench-profile-${i}@example.com`)).key);
const auth = { authorization: `Bearer ${keys[0]}` };
const body = JSON.stringify({ prompt: 'hello', model: 'bench-model', language: 'typescript', ...(scenario === 'sse' ? { stream: true } : {}) });
const target = scenario === 'profile'
  ? { url: `${url}/v1/user/profile`, opts: { requests: keys.map((key) => ({ method: 'GET', headers: { authorization: `Bearer ${key}` } })) } }
  : { url: `${url}/api/v1/generate`, opts: { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body } };
const mark = () => Number(process.hrtime.bigint() / 1000n); // the same monotonic clock as the profile's timestamps
let from;
let to;
if (scenario === 'seq') {
  await sequentialLatency(`${url}/api/v1/generate`, { body, headers: auth, count: 1000 });
  from = mark();
  // One connection, sequential: the single-connection overhead figure.
  const seq = await sequentialLatency(`${url}/api/v1/generate`, { body, headers: auth, count: duration * 500 });
  to = mark();
  console.log(`seq: p50 ${seq.p50.toFixed(3)} ms, p99 ${seq.p99.toFixed(3)} ms`);
} else {
  await load(target.url, { ...target.opts, duration: 2, connections: 50 });
  from = mark();
  const run = await load(target.url, { ...target.opts, duration, connections: 50 });
  to = mark();
  console.log(`${scenario}: ${Math.round(run.rps)} req/s, p99 ${run.p99} ms, non-2xx ${run.non2xx}`);
}
await new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); });
await upstream.stop();

const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
const profile = JSON.parse(readFileSync(join(profDir, file), 'utf8'));
const self = new Map();
const dt = new Map();
// Only the samples taken during the measured run (not start-up, warm-up or shutdown).
let at = profile.startTime;
profile.samples.forEach((id, i) => {
  at += profile.timeDeltas[i] ?? 0;
  if (at >= from && at <= to) dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
let total = 0;
for (const node of profile.nodes) {
  const t = dt.get(node.id) ?? 0;
  total += t;
  const cf = node.callFrame;
  const where = cf.url ? `${cf.url.replace(/^file:\/\//, '').replace(root, '').replace(/.*node_modules\//, '~')}:${cf.lineNumber + 1}` : '';
  const name = `${cf.functionName || '(anonymous)'} ${where}`;
  self.set(name, (self.get(name) ?? 0) + t);
}
// Shares of busy time (idle excluded), so runs of different lengths compare.
const busy = total - (self.get('(idle) ') ?? 0);
const rows = [...self].filter(([name]) => name !== '(idle) ').sort((a, b) => b[1] - a[1]).slice(0, top);
console.log(`profile: ${join(profDir, file)} (${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy)`);
for (const [name, t] of rows) console.log(`${((t / busy) * 100).toFixed(1).padStart(5)} %  ${name}`);
// By package / file group: where the busy time goes.
const groups = new Map();
for (const [name, t] of self) {
  if (name === '(idle) ') continue;
  const where = name.split(' ')[1] ?? '';
  const g = where.startsWith('~') ? where.slice(1).split('/')[0] : where.startsWith('packages/') ? where.split('/').slice(0, 5).join('/') : where.startsWith('node:') ? where.split(':')[1].split('/').slice(0, 2).join('/') : name.split(' ')[0];
  groups.set(g, (groups.get(g) ?? 0) + t);
}
console.log('\nby group:');
for (const [g, t] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${((t / busy) * 100).toFixed(1).padStart(5)} %  ${g}`);

// Inclusive ("total") time of our own functions and the libraries' entry points: what a frame costs with all it calls.
if (process.env.PROFILE_INCLUSIVE) {
  const pattern = new RegExp(process.env.PROFILE_INCLUSIVE === '1' ? 'packages/server' : process.env.PROFILE_INCLUSIVE);
  const parent = new Map();
  for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const inclusive = new Map();
  for (const [id, t] of dt) {
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur).callFrame;
      if (cf.functionName === '(idle)') break;
      const name = `${cf.functionName || '(anonymous)'} ${cf.url.replace(/^file:\/\//, '').replace(root, '').replace(/.*node_modules\//, '~')}:${cf.lineNumber + 1}`;
      if (seen.has(name) || !pattern.test(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + t);
    }
  }
  console.log(`\ninclusive (frames matching ${pattern}):`);
  for (const [name, t] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((t / busy) * 100).toFixed(1).padStart(5)} %  ${name}`);
}
