// Runs through two instances on one PostgreSQL and Redis (the BullMQ engine): 200 single-step
// sandbox runs, each executed once somewhere in the cluster and watched over WebSocket from
// either instance. Figures: runs/s end to end, and run events delivered vs expected
// (every run's frames 1..N exactly once: must be 100 %).
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { json, printTable, root, startProcess } from './lib.mjs';

const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL;

function connect(url, token) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace('http', 'ws')}/api/v1/stream?environment=sandbox`, { headers: { authorization: `Bearer ${token}`, 'x-environment': 'sandbox' } });
    ws.once('message', () => resolve(ws));
    ws.once('error', reject);
  });
}

export async function benchRuns({ runs = Number(process.env.BENCH_RUNS ?? 200), accounts = 10 } = {}) {
  if (!DATABASE_URL || !REDIS_URL) {
    console.log('\n## Runs through two instances\nskipped: set TEST_DATABASE_URL and TEST_REDIS_URL (or BENCH_DATABASE_URL / BENCH_REDIS_URL)');
    return;
  }
  const pg = (await import('pg')).default;
  const schema = `bench_runs_${randomBytes(4).toString('hex')}`;
  const sql = async (text) => { const c = new pg.Client({ connectionString: DATABASE_URL }); await c.connect(); try { await c.query(text); } finally { await c.end(); } };
  await sql(`CREATE SCHEMA "${schema}"`);
  const env = {
    DATABASE_URL, CODELOOM_DATABASE_SCHEMA: schema, REDIS_URL, CODELOOM_REDIS_PREFIX: `${schema}:`, CODELOOM_ISSUER: 'http://codeloom.bench',
    CODELOOM_ARGON2_MEMORY_KIB: '4096', CODELOOM_TRUST_PROXY: 'true', CODELOOM_RUNS_PER_ACCOUNT: '8', CODELOOM_RUNS_TOTAL: '16',
  };
  const main = join(root, 'packages/server/dist/main.js');
  const servers = [await startProcess(main, env), await startProcess(main, env)];
  try {
    const sandbox = { 'x-environment': 'sandbox' };
    const users = [];
    for (let i = 0; i < accounts; i++) {
      const server = servers[i % 2];
      const reg = await json(`${server.url}/api/v1/auth/register`, { method: 'POST', headers: { 'x-forwarded-for': `10.88.0.${i + 1}` }, body: JSON.stringify({ email: `bench-runs-${i}@example.com`, password: 'bench password', name: 'Bench' }) });
      const auth = { authorization: `Bearer ${reg.body.token}`, ...sandbox };
      const agent = await json(`${server.url}/api/v1/agents`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'coder', model: 'sandbox', config: { specialization: 'coder' } }) });
      // Each account watches from the instance it does not execute through.
      const ws = await connect(servers[(i + 1) % 2].url, reg.body.token);
      users.push({ auth, agent: agent.body.id, ws, server });
    }
    const frames = new Map(); // run id -> seqs received
    const finals = new Map(); // run id -> seq of its final frame
    const succeeded = new Set();
    let resolveAll;
    const allDone = new Promise((r) => { resolveAll = r; });
    for (const u of users) {
      u.ws.on('message', (raw) => {
        const f = JSON.parse(raw);
        if (!f.id?.startsWith('run_')) return;
        if (!frames.has(f.id)) frames.set(f.id, []);
        if (typeof f.seq === 'number') frames.get(f.id).push(f.seq);
        if (f.event === 'complete' || f.event === 'error') {
          if (f.event === 'complete') succeeded.add(f.id);
          finals.set(f.id, f.seq);
          if (finals.size === runs) resolveAll();
        }
      });
    }
    const started = performance.now();
    await Promise.all(Array.from({ length: runs }, async (_, i) => {
      const u = users[i % accounts];
      const res = await json(`${u.server.url}/api/v1/agents/${u.agent}/execute`, { method: 'POST', headers: u.auth, body: JSON.stringify({ task: `CLI number ${i}` }) });
      if (res.status !== 202) throw new Error(`execute answered ${res.status}: ${JSON.stringify(res.body)}`);
      u.ws.send(JSON.stringify({ type: 'subscribe', run_id: res.body.id }));
    }));
    const timeout = setTimeout(() => resolveAll(), 120_000);
    await allDone;
    clearTimeout(timeout);
    const seconds = (performance.now() - started) / 1000;
    let expected = 0;
    let delivered = 0;
    for (const [id, last] of finals) {
      expected += last;
      const seqs = frames.get(id) ?? [];
      // Delivered means each of 1..N exactly once.
      delivered += new Set(seqs.filter((s) => s >= 1 && s <= last)).size - Math.max(0, seqs.length - new Set(seqs).size);
    }
    for (const u of users) u.ws.close();
    printTable('Runs through two instances (PostgreSQL + Redis, BullMQ)', [{
      runs, succeeded: succeeded.size, seconds: Number(seconds.toFixed(2)), 'runs/s': Number((finals.size / seconds).toFixed(1)),
      'events expected': expected, 'events delivered': delivered, delivered: `${((delivered / Math.max(1, expected)) * 100).toFixed(1)} %`,
    }]);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    const { Redis } = await import('ioredis');
    const redis = new Redis(REDIS_URL);
    for (let cursor = '0'; ;) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${schema}:*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      if ((cursor = next) === '0') break;
    }
    await redis.quit();
  }
}
