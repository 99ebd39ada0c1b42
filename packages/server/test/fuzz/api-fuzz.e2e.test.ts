import http from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, TEST_DATABASE_URL, type TestServer } from '../helpers/test-server.js';
import { registerUser, request } from '../helpers/http.js';
import { operationsOf, requestFor, type FuzzRequest, type Pools } from './openapi-requests.js';
import { describe as describeFailure, problemWith, send, type Account, type FuzzResponse } from './fuzz-client.js';

/**
 * Property-based fuzzing of every route in the server's own OpenAPI document:
 * valid, boundary and hostile values, sent as account A, anonymously or with
 * forged credentials, while account B owns resources A must never see.
 * FUZZ_SEED replays a run; FUZZ_REQUESTS sets how many requests each dialect gets.
 */
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
const PER_DIALECT = Number(process.env.FUZZ_REQUESTS ?? 0);
const BATCH = 100;
const CONCURRENCY = 16;
const totals = { requests: 0, fiveHundreds: 0, byDialect: [] as string[], statuses: new Map<number, number>() };

process.stdout.write(`fuzz: seed ${SEED} (set FUZZ_SEED=${SEED} to replay)\n`);

interface Owned { account: Account; email: string; ids: string[] }

async function populate(base: string, t: TestServer, name: string): Promise<Owned> {
  const user = await registerUser(base, { name });
  await t.server.ctx.store.accounts.setPlanByEmail(user.email.toLowerCase(), 'enterprise');
  const as = (path: string, body: unknown) => request(`${base}${path}`, { token: user.token, body });
  const ok = <T>(res: { status: number; text: string; body: T }) => { expect(res.status, res.text).toBeLessThan(300); return res.body as any; };
  const key = ok(await as('/api/v1/api-keys', { name: `${name} key` }));
  const spare = ok(await as('/api/v1/api-keys', { name: `${name} spare` }));
  const project = ok(await as('/api/v1/projects', { name: `${name} project`, template: 'node-cli' }));
  const agent = ok(await as('/api/v1/agents', { name: `${name} agent`, model: 'sandbox' }));
  const workflow = ok(await as('/api/v1/agents/create', { name: `${name} workflow`, agents: [{ type: 'coder' }] }));
  const generation = ok(await as('/api/v1/generate', { prompt: 'a function that adds two numbers', language: 'typescript', project_id: project.id }));
  const client = ok(await as('/api/v1/oauth/clients', { name: `${name} app`, redirect_uris: ['https://app.example/cb'], scopes: ['read:code'] }));
  const run = ok(await as(`/api/v1/agents/${agent.id}/execute`, { task: 'write a hello world' }));
  const profile = ok(await request(`${base}/api/v1/user/profile`, { token: user.token }));
  return {
    account: { token: user.token, key: key.key },
    email: user.email,
    // The credential key's own id stays out of the pool: deleting it would turn the rest of the run into 401s.
    ids: [spare.id, project.id, agent.id, workflow.id, generation.id, client.client_id, run.id, user.user.id, profile.organization.id],
  };
}

async function sendBatch(base: URL, agent: http.Agent, batch: FuzzRequest[], a: Account, secretsOfB: string[]): Promise<string | undefined> {
  let next = 0;
  let failure: string | undefined;
  const worker = async () => {
    while (next < batch.length && !failure) {
      const req = batch[next++]!;
      let res: FuzzResponse | undefined;
      try {
        res = await send(base, agent, req, a);
      } catch (error) {
        failure = describeFailure(req, undefined, `no answer: ${(error as Error).message}`);
        return;
      }
      totals.requests += 1;
      if (res.status >= 500) totals.fiveHundreds += 1;
      totals.statuses.set(res.status, (totals.statuses.get(res.status) ?? 0) + 1);
      // An error may echo what the request itself said; a success must never name B's resources.
      const secrets = res.status >= 400 ? secretsOfB.filter((s) => !req.url.includes(s) && !(req.body ?? '').includes(s)) : secretsOfB;
      const problem = problemWith(req, res, secrets);
      if (problem) failure = describeFailure(req, res, problem);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return failure;
}

function fuzzSuite(dialect: 'sqlite' | 'postgres', defaultRequests: number) {
  let t: TestServer;
  let a: Owned;
  let b: Owned;
  beforeAll(async () => {
    t = await startTestServer({ dialect, env: { CODELOOM_LOGIN_MAX_FAILURES: '1000', CODELOOM_LOGIN_MAX_FAILURES_PER_IP: '100000' } });
    a = await populate(t.url, t, 'Alice');
    b = await populate(t.url, t, 'Bob');
  });
  afterAll(async () => { await t?.close(); });

  it(`every answer to ${PER_DIALECT || defaultRequests} generated requests is a 2xx-4xx, every error a known problem document, and A never sees B's resources`, async () => {
    const doc = (await request(`${t.url}/openapi.json`)).body;
    const ops = operationsOf(doc);
    expect(ops.length).toBeGreaterThan(30);
    const base = new URL(t.url);
    const fetchList = async (path: string, field: string) => ((await request(`${t.url}${path}`, { token: a.account.token })).body.data as Array<Record<string, string>>).map((x) => x[field]!);
    const pools: Pools = {
      ids: [...a.ids, ...b.ids, 'prj_doesnotexist', 'run_0', 'usr_', 'cli_x', 'key_0000000000000000000000'],
      emails: [a.email, b.email, a.email.toUpperCase(), `fresh-${SEED}@example.com`],
      templates: await fetchList('/api/v1/templates', 'id'),
      models: ['sandbox', 'no-such-model'],
      languages: (await fetchList('/api/v1/languages', 'id')).slice(0, 8),
    };
    const secretsOfB = [...b.ids, b.email];
    const requestArb = fc.constantFrom(...ops).chain((op) => requestFor(op, pools));
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const before = totals.requests;
    const total = PER_DIALECT || defaultRequests;
    try {
      await fc.assert(fc.asyncProperty(fc.array(requestArb, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        const failure = await sendBatch(base, agent, batch, a.account, secretsOfB);
        if (failure) throw new Error(failure);
      }), {
        seed: SEED, numRuns: Math.ceil(total / BATCH), endOnFailure: !process.env.FUZZ_SHRINK,
        // The failing request alone, not the whole batch fast-check would print.
        reporter: (out) => {
          if (out.failed) throw new Error(`fuzz failed (replay: FUZZ_SEED=${out.seed}): ${(out.errorInstance as Error | undefined)?.message ?? 'interrupted'}`);
        },
      });
    } finally {
      agent.destroy();
      totals.byDialect.push(`${dialect} ${totals.requests - before}`);
    }

    // Healthy afterwards: probes, A's own account, and B's resources untouched.
    expect((await request(`${t.url}/healthz`)).status).toBe(200);
    expect((await request(`${t.url}/readyz`)).status).toBe(200);
    expect((await request(`${t.url}/api/v1/user/profile`, { token: a.account.token })).status).toBe(200);
    const bProject = b.ids[1]!;
    expect((await request(`${t.url}/api/v1/projects/${bProject}`, { token: b.account.token })).status).toBe(200);
    const listed = await request(`${t.url}/api/v1/projects?limit=100`, { token: a.account.token });
    expect(listed.status).toBe(200);
    expect(listed.text).not.toContain(bProject);
  }, 600_000);
}

describe('API fuzz (SQLite)', () => fuzzSuite('sqlite', 7_000));
describe.skipIf(!TEST_DATABASE_URL)('API fuzz (PostgreSQL)', () => fuzzSuite('postgres', 4_000));

afterAll(() => {
  const statuses = [...totals.statuses].sort(([x], [y]) => x - y).map(([status, n]) => `${status}: ${n}`).join(', ');
  process.stdout.write(`fuzz: ${totals.requests} requests, ${totals.fiveHundreds} 5xx (${totals.byDialect.join(', ')}; seed ${SEED}; statuses ${statuses})\n`);
});
