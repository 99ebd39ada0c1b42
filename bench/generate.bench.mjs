// Gateway overhead: POST /api/v1/generate through the OpenAI-compatible provider to a
// local upstream that answers at once, against calling that upstream directly.
import { join } from 'node:path';
import { cpuMicros, enterpriseUser, load, printTable, root, sequentialLatency, startCodeloom, startProcess } from './lib.mjs';

export async function benchGenerate({ duration = 5 } = {}) {
  const upstream = await startProcess(join(root, 'bench/openai-upstream.mjs'));
  const bare = await startProcess(join(root, 'bench/bare-server.mjs'));
  const server = await startCodeloom({ OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'bench', CODELOOM_OPENAI_MODELS: 'bench-model', LOG_LEVEL: 'warn' });
  try {
    const { key } = await enterpriseUser(server, 'bench-generate@example.com');
    const auth = { authorization: `Bearer ${key}` };
    const upstreamBody = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'hello' }], stream: true, stream_options: { include_usage: true } });
    const generateBody = JSON.stringify({ prompt: 'hello', model: 'bench-model', language: 'typescript' });
    const direct = await sequentialLatency(`${upstream.url}/v1/chat/completions`, { body: upstreamBody });
    const cpu0 = cpuMicros(server.child.pid);
    const via = await sequentialLatency(`${server.url}/api/v1/generate`, { body: generateBody, headers: auth });
    // 2,000 measured requests plus the warm-up the helper sends first.
    const gatewayCpu = (cpuMicros(server.child.pid) - cpu0) / 2200;
    printTable('POST /api/v1/generate vs the upstream directly, 1 connection, 2,000 sequential requests (target: median overhead ≤ 0.3 ms)', [
      { path: 'upstream directly', 'p50 ms': direct.p50.toFixed(3), 'p99 ms': direct.p99.toFixed(3) },
      { path: 'through Codeloom', 'p50 ms': via.p50.toFixed(3), 'p99 ms': via.p99.toFixed(3) },
      { path: 'overhead', 'p50 ms': (via.p50 - direct.p50).toFixed(3), 'p99 ms': (via.p99 - direct.p99).toFixed(3) },
    ]);
    console.log(`Codeloom server CPU per generate (auth, limits, upstream call, parsing, history write): ${(gatewayCpu / 1000).toFixed(3)} ms`);
    const bareRun = await load(`${bare.url}/`, { duration, connections: 50 });
    const genRun = await load(`${server.url}/api/v1/generate`, { duration, connections: 50, method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: generateBody });
    printTable(`50 connections, ${duration} s (target: generate ≥ 25 % of the bare route)`, [
      { scenario: 'bare Fastify {}', 'req/s': Math.round(bareRun.rps), 'p99 ms': bareRun.p99, 'non-2xx': bareRun.non2xx },
      { scenario: 'POST /api/v1/generate', 'req/s': Math.round(genRun.rps), 'p99 ms': genRun.p99, 'non-2xx': genRun.non2xx, 'vs bare': `${((genRun.rps / bareRun.rps) * 100).toFixed(1)} %` },
    ]);
    return { direct, via, bare: bareRun, generate: genRun };
  } finally {
    await Promise.all([upstream.stop(), bare.stop(), server.stop()]);
  }
}
