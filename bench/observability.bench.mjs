// Observability on the request hot path (issue 28): POST /api/v1/generate's server CPU per request with the
// request log off (CODELOOM_LOG_CALLS=false) and no tracing, against each part alone and the same with the request log written
// (one row per call, group-committed with the usage row) and every request traced (a span per request and one
// per model call, exported over OTLP/HTTP to a local sink) — the model metrics are counted on both (they have
// no off switch). Two servers side by side against the same local upstream, measured in turns (A, B, A, B) so
// the machine's noise falls on both. Target: CPU per request with observability ≤ 1.10× without.
// Then memory: the "on" server under constant load for BENCH_MEMORY_SECONDS (default 30; the figure
// is 300), RSS sampled once a second — it must not grow — and the database's growth per call (every table: the
// generation row too; the request log's own bytes per row are measured by test/request-log-size.e2e.test.ts).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cpuMicros, enterpriseUser, load, printTable, root, rssMiB, startCodeloom, startProcess } from './lib.mjs';

const TARGET = 1.1;
const MEMORY_DRIFT_PCT = 10;

const dirBytes = (dir) => readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);

export async function benchObservability({ duration = 5, memorySeconds = Number(process.env.BENCH_MEMORY_SECONDS ?? 30) } = {}) {
  const upstream = await startProcess(join(root, 'bench/openai-upstream.mjs'));
  const sink = await startProcess(join(root, 'bench/otlp-sink.mjs'));
  const env = { OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'bench', CODELOOM_OPENAI_MODELS: 'bench-model', LOG_LEVEL: 'info' };
  const onEnv = { ...env, CODELOOM_LOG_CALLS: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: 'codeloom-bench' };
  // Side by side, measured in turns: off; each part alone (the breakdown); everything on (the target); and everything
  // with one trace in ten kept (the standard sampler variables): what a busy instance would run.
  const scenarios = [
    { name: 'request log off, no tracing (metrics on)', env: { ...env, CODELOOM_LOG_CALLS: 'false' } },
    { name: 'request log only', env: { ...env, CODELOOM_LOG_CALLS: 'true' } },
    { name: 'OTLP traces only', env: { ...onEnv, CODELOOM_LOG_CALLS: 'false' } },
    { name: 'request log + metrics + OTLP traces', env: onEnv, target: true },
    { name: 'the same, 1 trace in 10 sampled', env: { ...onEnv, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' } },
  ];
  for (const sc of scenarios) sc.server = await startCodeloom(sc.env);
  let memServer;
  try {
    for (const [i, sc] of scenarios.entries()) sc.user = await enterpriseUser(sc.server, `bench-obs-${i}@example.com`);
    const body = JSON.stringify({ prompt: 'hello', model: 'bench-model', language: 'typescript' });
    const opts = (key) => ({ method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body, connections: 50 });
    const measure = async (server, key) => {
      const c0 = cpuMicros(server.child.pid);
      const r = await load(`${server.url}/api/v1/generate`, { ...opts(key), duration });
      return { ...r, cpuUs: (cpuMicros(server.child.pid) - c0) / Math.max(1, r.total) };
    };
    for (const sc of scenarios) await load(`${sc.server.url}/api/v1/generate`, { ...opts(sc.user.key), duration: 2 });
    for (const sc of scenarios) sc.runs = [];
    for (let i = 0; i < 2; i++) for (const sc of scenarios) sc.runs.push(await measure(sc.server, sc.user.key));
    const sum = (rs) => ({ rps: rs.reduce((n, r) => n + r.rps, 0) / rs.length, cpuUs: rs.reduce((n, r) => n + r.cpuUs * r.total, 0) / rs.reduce((n, r) => n + r.total, 0), p99: Math.max(...rs.map((r) => r.p99)), non2xx: rs.reduce((n, r) => n + r.non2xx, 0) });
    for (const sc of scenarios) sc.result = sum(sc.runs);
    const p = scenarios[0].result;
    const on = scenarios.find((sc) => sc.target);
    const ratio = on.result.cpuUs / p.cpuUs;
    // The rows the "on" server wrote, and what the sink received.
    const logs = await (await fetch(`${on.server.url}/api/v1/logs?limit=1`, { headers: { authorization: `Bearer ${on.user.token}` } })).json();
    const exported = await (await fetch(`${sink.url}/stats`)).json();
    printTable(`POST /api/v1/generate (JSON), 50 connections, 2 × ${duration} s each in turns, one run`, scenarios.map((sc, i) => {
      const r = sc.result;
      const x = r.cpuUs / p.cpuUs;
      return {
        scenario: sc.name, 'req/s': Math.round(r.rps), 'p99 ms': r.p99, 'non-2xx': r.non2xx, 'server CPU µs/req': Math.round(r.cpuUs),
        target: i === 0 ? '' : sc.target ? `CPU ≤ ${TARGET}× without: ${x.toFixed(3)}× ${x <= TARGET ? 'met' : 'MISSED'}` : `${x.toFixed(3)}× without`,
      };
    }));
    console.log(`request log rows written: ${logs.pagination?.total}; OTLP export: ${exported.posts} posts, ${(exported.bytes / 1e6).toFixed(1)} MB`);
    await Promise.all(scenarios.map((sc) => sc.server.stop()));

    // Memory and bytes per logged call, on a fresh "on" server.
    memServer = await startCodeloom(onEnv);
    const accounts = Math.ceil(((memorySeconds + 10) * 8000) / 90_000);
    // One after another: enterpriseUser blocks this process in the CLI (spawnSync), and sockets left idle meanwhile may be closed under parallel fetches.
    const users = [];
    for (let i = 0; i < accounts; i++) users.push(await enterpriseUser(memServer, `bench-obs-mem-${i}@example.com`));
    const requests = users.map((u) => ({ method: 'POST', headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' }, body }));
    await load(`${memServer.url}/api/v1/generate`, { requests, duration: 10, connections: 50 });
    const countRows = async () => {
      let n = 0;
      for (const u of users) n += (await (await fetch(`${memServer.url}/api/v1/logs?limit=1`, { headers: { authorization: `Bearer ${u.token}` } })).json()).pagination.total;
      return n;
    };
    const rows0 = await countRows();
    const bytes0 = dirBytes(memServer.dataDir);
    const samples = [];
    const timer = setInterval(() => samples.push(rssMiB(memServer.child.pid)), 1000);
    const r = await load(`${memServer.url}/api/v1/generate`, { requests, duration: memorySeconds, connections: 50 });
    clearInterval(timer);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const rows1 = await countRows();
    const bytes1 = dirBytes(memServer.dataDir);
    const tenth = Math.max(1, Math.floor(samples.length / 10));
    const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    const start = median(samples.slice(0, tenth));
    const end = median(samples.slice(-tenth));
    const driftPct = ((end - start) / start) * 100;
    const perRow = (bytes1 - bytes0) / Math.max(1, rows1 - rows0);
    printTable(`Observability on: memory at 50 connections for ${memorySeconds} s (BENCH_MEMORY_SECONDS; the target is for 300 s), and the request log's size`, [{
      'RSS start MiB': start.toFixed(1), 'RSS end MiB': end.toFixed(1), 'min MiB': Math.min(...samples).toFixed(1), 'max MiB': Math.max(...samples).toFixed(1),
      'end vs start': `${driftPct >= 0 ? '+' : ''}${driftPct.toFixed(1)} %`, requests: r.total, 'non-2xx': r.non2xx, 'log rows': rows1 - rows0,
      'DB growth per call, all tables (the generation row too)': Math.round(perRow),
      target: `± ${MEMORY_DRIFT_PCT} %: ${Math.abs(driftPct) <= MEMORY_DRIFT_PCT ? 'met' : 'MISSED'}`,
    }]);
    return { scenarios: scenarios.map((sc) => ({ name: sc.name, ...sc.result })), ratio, memory: { start, end, driftPct }, bytesPerRow: perRow };
  } finally {
    await Promise.all([upstream.stop(), sink.stop(), ...scenarios.map((sc) => sc.server.stop()), memServer?.stop()]);
  }
}
