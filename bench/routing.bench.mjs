// Deployment routing (issue 25): the router's choice of a deployment on its own, in nanoseconds (target ≤ 5 µs a
// choice), and POST /api/v1/generate's server CPU per request on a model served by two deployments (weighted
// routing, health kept, one with an rpm quota held in the LimitStore) against the same upstream configured by
// environment (today's path): two servers side by side, in turns (A, B, A, B). Target: within 10 %.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cpuMicros, enterpriseUser, json, load, printTable, root, startCodeloom, startProcess } from './lib.mjs';

const CHOICE_TARGET_US = 5;
const CPU_TARGET = 1.1;

/** chooseTarget over `n` deployments, each strategy: ns per choice (median of 5 runs of 1e6 choices). */
async function choiceCost() {
  const { chooseTarget, DeploymentHealth } = await import(pathToFileURL(join(root, 'packages/server/dist/providers/routing/router.js')).href);
  const rows = [];
  for (const n of [2, 8]) {
    const targets = Array.from({ length: n }, (_, i) => ({ weight: 1 + (i % 3), health: new DeploymentHealth(`dep_${i}`) }));
    targets[0].health.cooldownUntil = Date.now() + 60_000; // one cooling down, as in real life
    for (const strategy of ['weighted', 'least-busy', 'latency']) {
      const runs = [];
      let sink = 0;
      for (let r = 0; r < 5; r++) {
        const t0 = process.hrtime.bigint();
        const now = Date.now();
        for (let i = 0; i < 1_000_000; i++) sink += chooseTarget(targets, strategy, now, undefined, Math.random()).weight;
        runs.push(Number(process.hrtime.bigint() - t0) / 1_000_000);
      }
      runs.sort((a, b) => a - b);
      const ns = runs[2];
      rows.push({ deployments: n, strategy, 'ns/choice': ns.toFixed(1), target: `≤ ${CHOICE_TARGET_US} µs: ${ns / 1000 <= CHOICE_TARGET_US ? 'met' : 'MISSED'}`, sink: sink > 0 ? '' : '?' });
    }
  }
  printTable('The router\'s choice (chooseTarget), 1e6 choices × 5, median', rows.map(({ sink: _s, ...r }) => r));
  return rows;
}

export async function benchRouting({ duration = 5 } = {}) {
  const choices = await choiceCost();
  const upstream = await startProcess(join(root, 'bench/openai-upstream.mjs'));
  const env = { LOG_LEVEL: 'info', CODELOOM_SECRET_KEY: 'bench-secret-key' };
  const plain = await startCodeloom({ ...env, OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'bench', CODELOOM_OPENAI_MODELS: 'bench-model' });
  const routed = await startCodeloom(env);
  try {
    const a = await enterpriseUser(plain, 'bench-routing-a@example.com');
    const b = await enterpriseUser(routed, 'bench-routing-b@example.com'); // the first account: an administrator
    const admin = { authorization: `Bearer ${b.token}` };
    for (const [name, weight, rpm] of [['gpu-1', 1, null], ['gpu-2', 3, 1_000_000_000]]) {
      const res = await json(`${routed.url}/api/v1/admin/deployments`, { method: 'POST', headers: admin, body: JSON.stringify({ name, provider: 'openai', base_url: `${upstream.url}/v1`, api_key: 'bench', weight, rpm, models: [{ id: 'bench-model', price: { input: 2.5, output: 10 } }] }) });
      if (res.status !== 201) throw new Error(`deployment: ${res.status} ${JSON.stringify(res.body)}`);
    }
    const body = JSON.stringify({ prompt: 'hello', model: 'bench-model', language: 'typescript' });
    const opts = (key) => ({ method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body, connections: 50 });
    const measure = async (server, key) => {
      const c0 = cpuMicros(server.child.pid);
      const r = await load(`${server.url}/api/v1/generate`, { ...opts(key), duration });
      return { ...r, cpuUs: (cpuMicros(server.child.pid) - c0) / Math.max(1, r.total) };
    };
    await load(`${plain.url}/api/v1/generate`, { ...opts(a.key), duration: 2 });
    await load(`${routed.url}/api/v1/generate`, { ...opts(b.key), duration: 2 });
    const runs = { plain: [], routed: [] };
    for (let i = 0; i < 2; i++) {
      runs.plain.push(await measure(plain, a.key));
      runs.routed.push(await measure(routed, b.key));
    }
    const sum = (rs) => ({ rps: rs.reduce((n, r) => n + r.rps, 0) / rs.length, cpuUs: rs.reduce((n, r) => n + r.cpuUs * r.total, 0) / rs.reduce((n, r) => n + r.total, 0), p99: Math.max(...rs.map((r) => r.p99)), non2xx: rs.reduce((n, r) => n + r.non2xx, 0) });
    const p = sum(runs.plain);
    const q = sum(runs.routed);
    const ratio = q.cpuUs / p.cpuUs;
    printTable(`POST /api/v1/generate (JSON), 50 connections, 2 × ${duration} s each in turns, one run`, [
      { scenario: 'model configured by environment', 'req/s': Math.round(p.rps), 'p99 ms': p.p99, 'non-2xx': p.non2xx, 'server CPU µs/req': Math.round(p.cpuUs), target: '' },
      { scenario: 'model on 2 deployments (weighted, one with rpm)', 'req/s': Math.round(q.rps), 'p99 ms': q.p99, 'non-2xx': q.non2xx, 'server CPU µs/req': Math.round(q.cpuUs), target: `CPU ≤ ${CPU_TARGET}× environment: ${ratio.toFixed(3)}× ${ratio <= CPU_TARGET ? 'met' : 'MISSED'}` },
    ]);
    const list = await (await fetch(`${routed.url}/api/v1/admin/deployments`, { headers: admin })).json();
    console.log(`deployments after the run: ${list.data.map((d) => `${d.name} ${d.health.status} ${d.health.latency_ms} ms`).join('; ')}`);
    return { choices, plain: p, routed: q, ratio };
  } finally {
    await Promise.all([upstream.stop(), plain.stop(), routed.stop()]);
  }
}
