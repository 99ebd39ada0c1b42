// Issue: authenticated, rate-limited GET /v1/user/profile (JWT and API key) next to a bare Fastify route.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { json, load, printTable, root, startCodeloom, startProcess } from './lib.mjs';

export async function benchProfile({ duration = 5, connections = 10 } = {}) {
  const bare = await startProcess(join(root, 'bench/bare-server.mjs'));
  const server = await startCodeloom();
  try {
    const dataEnv = { ...process.env, CODELOOM_DATA_DIR: server.dataDir };
    const jwtUser = await json(`${server.url}/api/v1/auth/register`, { method: 'POST', body: JSON.stringify({ email: 'bench-jwt@example.com', password: 'bench password', name: 'Bench' }) });
    const keyUser = await json(`${server.url}/api/v1/auth/register`, { method: 'POST', body: JSON.stringify({ email: 'bench-key@example.com', password: 'bench password', name: 'Bench' }) });
    const key = await json(`${server.url}/api/v1/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${keyUser.body.token}` }, body: JSON.stringify({ name: 'bench' }) });
    // Enterprise has no per-minute cap, so the measurement is of admitted requests, not of 429s.
    for (const email of ['bench-jwt@example.com', 'bench-key@example.com']) {
      const r = spawnSync(process.execPath, [join(root, 'packages/cli/dist/main.js'), 'admin', 'set-plan', email, 'enterprise'], { env: dataEnv, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(r.stderr);
    }
    // Warm both servers' JIT before measuring anything.
    await load(`${bare.url}/`, { duration: 2, connections });
    await load(`${server.url}/v1/user/profile`, { duration: 2, connections, headers: { authorization: `Bearer ${key.body.key}` } });
    const bareRun = await load(`${bare.url}/`, { duration, connections });
    const jwtRun = await load(`${server.url}/v1/user/profile`, { duration, connections, headers: { authorization: `Bearer ${jwtUser.body.token}` } });
    const keyRun = await load(`${server.url}/v1/user/profile`, { duration, connections, headers: { authorization: `Bearer ${key.body.key}` } });
    const row = (name, r) => ({ scenario: name, 'req/s': Math.round(r.rps), 'p50 ms': r.p50, 'p99 ms': r.p99, 'non-2xx': r.non2xx, 'vs bare': `${((r.rps / bareRun.rps) * 100).toFixed(1)} %` });
    printTable(`GET /v1/user/profile, ${connections} connections, ${duration} s each (target: ≥ 50 % of bare)`, [
      row('bare Fastify {}', bareRun), row('profile via JWT', jwtRun), row('profile via API key', keyRun),
    ]);
    return { bare: bareRun, jwt: jwtRun, apiKey: keyRun };
  } finally {
    await Promise.all([bare.stop(), server.stop()]);
  }
}
