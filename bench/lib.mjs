// Shared pieces of the benchmarks: start processes, drive load with autocannon, print a table.
import { spawn } from 'node:child_process';
import * as awaitFs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { HEAP_FLAGS } from '../scripts/heap-flags.mjs';

export const root = fileURLToPath(new URL('..', import.meta.url));

/** Starts a node script that prints "listening on http://…" and resolves its URL (`nodeArgs`: flags for node itself). */
export function startProcess(script, env = {}, args = [], nodeArgs = []) {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(out);
      if (m) resolve({ url: m[1], child, stop: () => new Promise((r) => { if (child.exitCode !== null || child.signalCode !== null) return r(); child.once('exit', r); child.kill('SIGTERM'); }) });
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}: ${out}`)));
  });
}

/** Codeloom as `npm start` runs it (the heap flags of scripts/heap-flags.mjs), on a fresh SQLite data directory. */
export async function startCodeloom(env = {}, nodeArgs = HEAP_FLAGS) {
  const dataDir = mkdtempSync(join(tmpdir(), 'codeloom-bench-'));
  const proc = await startProcess(join(root, 'packages/server/dist/main.js'), { CODELOOM_DATA_DIR: dataDir, CODELOOM_ARGON2_MEMORY_KIB: '4096', ...env }, [], nodeArgs);
  return { ...proc, dataDir };
}

export async function load(url, { connections = 10, duration = 5, headers = {}, method = 'GET', body, requests } = {}) {
  const result = await autocannon({ url, connections, duration, headers, method, body, pipelining: 1, ...(requests ? { requests } : {}) });
  const non2xx = result.non2xx + result.errors;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx,
  };
}

export async function json(url, init = {}) {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  return { status: res.status, body: await res.json() };
}

export function printTable(title, rows) {
  console.log(`\n## ${title}`);
  console.table(rows);
}

/** Sequential requests over one keep-alive connection, timed with sub-millisecond resolution. */
export async function sequentialLatency(url, { count = 2000, headers = {}, body, method = 'POST' } = {}) {
  const http = await import('node:http');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const target = new URL(url);
  const once = () => new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request({ agent, host: target.hostname, port: target.port, path: target.pathname, method, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      res.on('data', () => {});
      res.on('end', () => (res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
  for (let i = 0; i < Math.min(200, count / 5); i++) await once();
  const samples = [];
  for (let i = 0; i < count; i++) samples.push(await once());
  agent.destroy();
  samples.sort((a, b) => a - b);
  const at = (q) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))];
  return { p50: at(0.5), p99: at(0.99), mean: samples.reduce((a, b) => a + b, 0) / samples.length };
}

/** Registers a user, moves it to the enterprise plan (no per-minute cap) and returns a session token and an API key. */
export async function enterpriseUser(server, email) {
  const { spawnSync } = await import('node:child_process');
  const reg = await json(`${server.url}/api/v1/auth/register`, { method: 'POST', body: JSON.stringify({ email, password: 'bench password', name: 'Bench' }) });
  const r = spawnSync(process.execPath, [join(root, 'packages/cli/dist/main.js'), 'admin', 'set-plan', email, 'enterprise'], { env: { ...process.env, CODELOOM_DATA_DIR: server.dataDir }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  await new Promise((resolve) => setTimeout(resolve, 1100)); // running servers see plan changes within a second
  const key = await json(`${server.url}/api/v1/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${reg.body.token}` }, body: JSON.stringify({ name: 'bench' }) });
  return { token: reg.body.token, key: key.body.key };
}

/** CPU time (user + system) a process has used, in microseconds, from /proc. */
export function cpuMicros(pid) {
  const { readFileSync } = awaitFs;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * (1e6 / 100);
}

/** Resident memory of a process in MiB, from /proc. */
export function rssMiB(pid) {
  const status = awaitFs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
}
