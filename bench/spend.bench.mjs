// Budgets and prices on the request hot path (issue 23): POST /api/v1/generate's server CPU per request with no
// price and no budget, against the same with the model priced (CODELOOM_MODEL_PRICES) and three budgets that
// apply to every call (the organization's by month, the member's by day, the API key's in total), measured
// in one run on two servers side by side against the same local upstream, in turns (A, B, A, B) so the
// machine's noise falls on both. The target: within 10 % (CPU per request with budgets ≤ 1.10× without).
import { join } from 'node:path';
import { cpuMicros, enterpriseUser, json, load, printTable, root, startCodeloom, startProcess } from './lib.mjs';

const TARGET = 1.1;

export async function benchSpend({ duration = 5 } = {}) {
  const upstream = await startProcess(join(root, 'bench/openai-upstream.mjs'));
  const env = { OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'bench', CODELOOM_OPENAI_MODELS: 'bench-model', LOG_LEVEL: 'info' };
  const plain = await startCodeloom(env);
  const priced = await startCodeloom({ ...env, CODELOOM_MODEL_PRICES: JSON.stringify({ 'bench-model': { input: 2.5, output: 10 } }) });
  try {
    const a = await enterpriseUser(plain, 'bench-spend-a@example.com');
    const b = await enterpriseUser(priced, 'bench-spend-b@example.com');
    const session = { authorization: `Bearer ${b.token}` };
    const profile = await (await fetch(`${priced.url}/api/v1/user/profile`, { headers: session })).json();
    const keys = await (await fetch(`${priced.url}/api/v1/api-keys`, { headers: session })).json();
    const keyId = (keys.data ?? keys)[0].id;
    for (const [scope, period] of [[{ type: 'organization', id: profile.organization.id }, 'month'], [{ type: 'member', id: profile.id }, 'day'], [{ type: 'api_key', id: keyId }, 'total']]) {
      const res = await json(`${priced.url}/api/v1/budgets`, { method: 'POST', headers: session, body: JSON.stringify({ scope, amount_usd: 1_000_000, period }) });
      if (res.status !== 201) throw new Error(`budget: ${res.status} ${JSON.stringify(res.body)}`);
    }
    const body = JSON.stringify({ prompt: 'hello', model: 'bench-model', language: 'typescript' });
    const opts = (key) => ({ method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body, connections: 50 });
    const measure = async (server, key) => {
      const c0 = cpuMicros(server.child.pid);
      const r = await load(`${server.url}/api/v1/generate`, { ...opts(key), duration });
      return { ...r, cpuUs: (cpuMicros(server.child.pid) - c0) / Math.max(1, r.total) };
    };
    await load(`${plain.url}/api/v1/generate`, { ...opts(a.key), duration: 2 });
    await load(`${priced.url}/api/v1/generate`, { ...opts(b.key), duration: 2 });
    const runs = { plain: [], priced: [] };
    for (let i = 0; i < 2; i++) {
      runs.plain.push(await measure(plain, a.key));
      runs.priced.push(await measure(priced, b.key));
    }
    const sum = (rs) => ({ rps: rs.reduce((n, r) => n + r.rps, 0) / rs.length, cpuUs: rs.reduce((n, r) => n + r.cpuUs * r.total, 0) / rs.reduce((n, r) => n + r.total, 0), p99: Math.max(...rs.map((r) => r.p99)), non2xx: rs.reduce((n, r) => n + r.non2xx, 0) });
    const p = sum(runs.plain);
    const q = sum(runs.priced);
    const ratio = q.cpuUs / p.cpuUs;
    printTable(`POST /api/v1/generate (JSON), 50 connections, 2 × ${duration} s each in turns, one run`, [
      { scenario: 'no price, no budget', 'req/s': Math.round(p.rps), 'p99 ms': p.p99, 'non-2xx': p.non2xx, 'server CPU µs/req': Math.round(p.cpuUs), target: '' },
      { scenario: 'priced model, 3 budgets on every call', 'req/s': Math.round(q.rps), 'p99 ms': q.p99, 'non-2xx': q.non2xx, 'server CPU µs/req': Math.round(q.cpuUs), target: `CPU ≤ ${TARGET}× without: ${ratio.toFixed(3)}× ${ratio <= TARGET ? 'met' : 'MISSED'}` },
    ]);
    const spent = await (await fetch(`${priced.url}/api/v1/budgets`, { headers: session })).json();
    console.log(`budgets after the run: ${spent.data.map((x) => `${x.scope.type} ${x.period} spent $${x.spent_usd}`).join('; ')}`);
    return { plain: p, priced: q, ratio };
  } finally {
    await Promise.all([upstream.stop(), plain.stop(), priced.stop()]);
  }
}
