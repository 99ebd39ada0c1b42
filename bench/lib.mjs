// Shared pieces of the benchmarks: start processes, drive load with autocannon, print a table.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

export const root = fileURLToPath(new URL('..', import.meta.url));

/** Starts a node script that prints "listening on http://…" and resolves its URL. */
export function startProcess(script, env = {}, args = []) {
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(out);
      if (m) resolve({ url: m[1], child, stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }) });
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}: ${out}`)));
  });
}

export async function startCodeloom(env = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'codeloom-bench-'));
  const proc = await startProcess(join(root, 'packages/server/dist/main.js'), { CODELOOM_DATA_DIR: dataDir, CODELOOM_ARGON2_MEMORY_KIB: '4096', ...env });
  return { ...proc, dataDir };
}

export async function load(url, { connections = 10, duration = 5, headers = {}, method = 'GET', body } = {}) {
  const result = await autocannon({ url, connections, duration, headers, method, body, pipelining: 1 });
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
