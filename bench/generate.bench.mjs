// The request hot path (issue 13), measured side by side in one run against the same local
// OpenAI-compatible upstream (bench/openai-upstream.mjs, answers at once): the bare Fastify route, the
// upstream directly, the forwarding alone (bench/forward-server.mjs), POST /api/v1/generate as JSON and as SSE, GET /v1/user/profile with an API key, the
// single-connection overhead, the server's CPU per request, and whether its memory stays flat under load.
// The server runs with its default logging (LOG_LEVEL=info, CODELOOM_REQUEST_LOG=errors).
//   BENCH_DURATION=10            seconds per load figure (default 5)
//   BENCH_MEMORY_SECONDS=300     the memory run (default 30; the figure is 5 minutes)
import { join } from 'node:path';
import { HEAP_FLAGS } from '../scripts/heap-flags.mjs';
import { cpuMicros, enterpriseUser, load, printTable, root, rssMiB, sequentialLatency, startCodeloom, startProcess } from './lib.mjs';

const TARGETS = {
  generateVsBare: 0.12,
  generateP99Ms: 15,
  overheadP50Ms: 0.3,
  overheadP99Ms: 1,
  profileVsBare: 0.5,
  memoryDriftPct: 10,
};
const verdict = (ok) => (ok ? 'met' : 'MISSED');

export async function benchGenerate({ duration = 5, memorySeconds = Number(process.env.BENCH_MEMORY_SECONDS ?? 30) } = {}) {
  const upstream = await startProcess(join(root, 'bench/openai-upstream.mjs'));
  const bare = await startProcess(join(root, 'bench/bare-server.mjs'));
  const forward = await startProcess(join(root, 'bench/forward-server.mjs'), { UPSTREAM_URL: `${upstream.url}/v1` }, [], HEAP_FLAGS);
  const env = { OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'bench', CODELOOM_OPENAI_MODELS: 'bench-model', LOG_LEVEL: 'info' };
  const server = await startCodeloom(env);
  const pid = server.child.pid;
  try {
    // Enterprise allows 100,000 requests an hour per account: one account per scenario (four for the profile: one to warm up, three in turn for the run).
    const keys = (await Promise.all(Array.from({ length: 6 }, (_, i) => enterpriseUser(server, `bench-generate-${i}@example.com`)))).map((u) => u.key);
    const auth = { authorization: `Bearer ${keys[0]}` };
    const authOf = (i) => ({ authorization: `Bearer ${keys[i]}` });
    const upstreamBody = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'hello' }], stream: true, stream_options: { include_usage: true } });
    const jsonBody = JSON.stringify({ prompt: 'hello', model: 'bench-model', language: 'typescript' });
    const sseBody = JSON.stringify({ prompt: 'hello', model: 'bench-model', language: 'typescript', stream: true });
    const generate = (body, headers = auth) => ({ method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });

    // Single connection: 2,000 sequential requests each way (after a warm-up the helper sends first). The server is
    // warmed under load first, as a running server is: 200 sequential requests leave most of the path unoptimized.
    const direct = await sequentialLatency(`${upstream.url}/v1/chat/completions`, { body: upstreamBody });
    await load(`${server.url}/api/v1/generate`, { ...generate(jsonBody), duration: Math.min(2, duration), connections: 50 });
    const seqCpu0 = cpuMicros(pid);
    const via = await sequentialLatency(`${server.url}/api/v1/generate`, { body: jsonBody, headers: auth });
    const seqCpu = (cpuMicros(pid) - seqCpu0) / 2200;

    // 50 connections. Every Codeloom scenario is warmed first; its CPU is the server process's, per request.
    // The warm-up may use another account (`warm`), so a fast route's measured run stays within one account's hourly requests.
    const measured = async (url, opts, warm = opts, of = pid) => {
      await load(url, { ...warm, duration: Math.min(2, duration), connections: 50 });
      const c0 = cpuMicros(of);
      const r = await load(url, { ...opts, duration, connections: 50 });
      return { ...r, cpuUs: (cpuMicros(of) - c0) / Math.max(1, r.total) };
    };
    await load(`${bare.url}/`, { duration: Math.min(2, duration), connections: 50 });
    const bareRun = await load(`${bare.url}/`, { duration, connections: 50 });
    const upstreamRun = await load(`${upstream.url}/v1/chat/completions`, { duration, connections: 50, method: 'POST', headers: { 'content-type': 'application/json' }, body: upstreamBody });
    const forwardRun = await measured(`${forward.url}/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: jsonBody }, undefined, forward.child.pid);
    const jsonRun = await measured(`${server.url}/api/v1/generate`, generate(jsonBody));
    const sseRun = await measured(`${server.url}/api/v1/generate`, generate(sseBody, authOf(1)));
    // The profile runs faster than one account's 100,000 requests an hour allow: each connection cycles through three accounts.
    const profileRun = await measured(`${server.url}/v1/user/profile`, { requests: [2, 4, 5].map((i) => ({ method: 'GET', headers: authOf(i) })) }, { headers: authOf(3) });

    const ratio = (r) => r.rps / bareRun.rps;
    const row = (scenario, r, target = '') => ({
      scenario, 'req/s': Math.round(r.rps), 'vs bare': ratio(r).toFixed(3), 'p50 ms': r.p50, 'p99 ms': r.p99, 'non-2xx': r.non2xx,
      'server CPU µs/req': r.cpuUs === undefined ? '' : Math.round(r.cpuUs), target,
    });
    printTable(`50 connections, ${duration} s each, one run`, [
      row('bare Fastify {}', bareRun),
      row('upstream directly (SSE)', upstreamRun),
      row('forwarding only (Fastify + undici → upstream, JSON)', forwardRun),
      row('POST /api/v1/generate (JSON)', jsonRun, `≥ ${TARGETS.generateVsBare}× bare: ${verdict(ratio(jsonRun) >= TARGETS.generateVsBare)}; p99 ≤ ${TARGETS.generateP99Ms} ms: ${verdict(jsonRun.p99 <= TARGETS.generateP99Ms)}`),
      row('POST /api/v1/generate (SSE)', sseRun),
      row('GET /v1/user/profile (API key)', profileRun, `≥ ${TARGETS.profileVsBare}× bare: ${verdict(ratio(profileRun) >= TARGETS.profileVsBare)}`),
    ]);

    console.log(`/generate JSON against the forwarding alone: ${(jsonRun.rps / forwardRun.rps).toFixed(2)}× its throughput, `
      + `${Math.round(jsonRun.cpuUs)} against ${Math.round(forwardRun.cpuUs)} µs of server CPU per request (auth, limits, token budget, storage, validation: ${Math.round(jsonRun.cpuUs - forwardRun.cpuUs)} µs)`);

    const overhead = { p50: via.p50 - direct.p50, p99: via.p99 - direct.p99 };
    printTable('1 connection, 2,000 sequential requests: POST /api/v1/generate vs the upstream directly', [
      { path: 'upstream directly', 'p50 ms': direct.p50.toFixed(3), 'p99 ms': direct.p99.toFixed(3), target: '' },
      { path: 'through Codeloom', 'p50 ms': via.p50.toFixed(3), 'p99 ms': via.p99.toFixed(3), target: `server CPU ${Math.round(seqCpu)} µs/req` },
      { path: 'overhead', 'p50 ms': overhead.p50.toFixed(3), 'p99 ms': overhead.p99.toFixed(3), target: `p50 ≤ ${TARGETS.overheadP50Ms}: ${verdict(overhead.p50 <= TARGETS.overheadP50Ms)}; p99 ≤ ${TARGETS.overheadP99Ms}: ${verdict(overhead.p99 <= TARGETS.overheadP99Ms)}` },
    ]);

    await server.stop();
    const memory = await memoryRun(env, jsonBody, memorySeconds);
    printTable(`Server memory, POST /api/v1/generate at 50 connections for ${memorySeconds} s (BENCH_MEMORY_SECONDS; the target is for 300 s)`, [{
      'RSS start MiB': memory.start.toFixed(1), 'RSS end MiB': memory.end.toFixed(1), 'min MiB': memory.min.toFixed(1), 'max MiB': memory.max.toFixed(1),
      'end vs start': `${memory.driftPct >= 0 ? '+' : ''}${memory.driftPct.toFixed(1)} %`, requests: memory.requests, 'non-2xx': memory.non2xx,
      target: `± ${TARGETS.memoryDriftPct} %: ${verdict(Math.abs(memory.driftPct) <= TARGETS.memoryDriftPct)}`,
    }]);
    return { direct, via, overhead, seqCpu, bare: bareRun, upstream: upstreamRun, forward: forwardRun, json: jsonRun, sse: sseRun, profile: profileRun, memory };
  } finally {
    await Promise.all([upstream.stop(), bare.stop(), forward.stop(), server.stop()]);
  }
}

/**
 * RSS once a second under constant load, on a server of its own (started as the others are), so what the other
 * scenarios left in its heap does not count. "Start" is the median of the samples in the first tenth of the run
 * after a 10 s warm-up (start-up growth does not count either), "end" the median of the last tenth.
 */
async function memoryRun(env, body, seconds) {
  const server = await startCodeloom(env);
  try {
    // Enough accounts for the run at up to 8,000 requests a second (each allows 100,000 an hour); each connection
    // cycles through one request per account, so the accounts share the load evenly.
    const accounts = Math.ceil(((seconds + 10) * 8000) / 90_000);
    const keys = (await Promise.all(Array.from({ length: accounts }, (_, i) => enterpriseUser(server, `bench-memory-${i}@example.com`)))).map((u) => u.key);
    const opts = { requests: keys.map((k) => ({ method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body })) };
    await load(`${server.url}/api/v1/generate`, { ...opts, duration: 10, connections: 50 });
    const samples = [];
    const timer = setInterval(() => samples.push(rssMiB(server.child.pid)), 1000);
    const r = await load(`${server.url}/api/v1/generate`, { ...opts, duration: seconds, connections: 50 });
    clearInterval(timer);
    const tenth = Math.max(1, Math.floor(samples.length / 10));
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const start = median(samples.slice(0, tenth));
    const end = median(samples.slice(-tenth));
    return { start, end, min: Math.min(...samples), max: Math.max(...samples), driftPct: ((end - start) / start) * 100, requests: r.total, non2xx: r.non2xx };
  } finally {
    await server.stop();
  }
}
