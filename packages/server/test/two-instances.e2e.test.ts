import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpawnedServer } from './helpers/spawn-server.js';
import { clusterEnabled, startCluster, type Cluster } from './helpers/cluster.js';
import { registerUser, request } from './helpers/http.js';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { awayFromWindowEnd } from './helpers/limit-windows.js';
import { nextIp } from './helpers/test-server.js';
import { cjkPrompt, expectExactBurst, reportedUse } from './helpers/exact-spend.js';
import { buildGenerationMessages } from '../src/modules/generate/generation-prompt.js';
import { promptTokenBound } from '../src/modules/generate/model-call.js';

if (!clusterEnabled) console.log('skipping two-instance tests: they need TEST_DATABASE_URL and TEST_REDIS_URL');

/** Two server processes on one PostgreSQL and one Redis act as one service. */
describe.skipIf(!clusterEnabled)('two server processes sharing PostgreSQL and Redis', () => {
  let cluster: Cluster;
  let a: SpawnedServer;
  let b: SpawnedServer;

  beforeAll(async () => {
    cluster = await startCluster('two');
    [a, b] = cluster.servers as [SpawnedServer, SpawnedServer];
  }, 60_000);

  afterAll(() => cluster?.stop());

  it('admits exactly the plan\'s per-minute limit between them, no more', async () => {
    // Windows are aligned to the clock minute: keep the burst inside one of them.
    const second = new Date().getUTCSeconds();
    if (second >= 55) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
    const u = await registerUser(a.url, { ip: '10.9.0.1' });
    const responses = await Promise.all(Array.from({ length: 160 }, (_, i) =>
      request(`${(i % 2 ? a : b).url}/v1/user/profile`, { token: u.token })));
    const ok = responses.filter((r) => r.status === 200);
    const limited = responses.filter((r) => r.status === 429);
    expect(ok.length + limited.length).toBe(160);
    expect(ok.length).toBe(100);
    expect(limited[0]!.body.code).toBe('rate_limited');
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited[0]!.headers.get('x-ratelimit-remaining')).toBe('0');
  });

  it('a logout on one instance is honoured by the other at once', async () => {
    const u = await registerUser(a.url, { ip: '10.9.0.2' });
    expect((await request(`${b.url}/api/v1/auth/verify`, { token: u.token })).status).toBe(200);
    expect((await request(`${a.url}/api/v1/auth/logout`, { token: u.token, method: 'POST' })).status).toBe(200);
    const after = await request(`${b.url}/api/v1/auth/verify`, { token: u.token });
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('invalid_token');
  });

  it('tokens signed by one instance verify on the other (one shared signing key)', async () => {
    const u = await registerUser(b.url, { ip: '10.9.0.3' });
    const jwksA = await request(`${a.url}/.well-known/jwks.json`);
    const jwksB = await request(`${b.url}/.well-known/jwks.json`);
    // Both started at once on an empty database: one signing key between them, not one each.
    expect(jwksA.body.keys).toHaveLength(1);
    expect(jwksA.body).toEqual(jwksB.body);
    expect((await request(`${a.url}/v1/user/profile`, { token: u.token })).status).toBe(200);
  });

  it('an API key revoked through one instance is refused by the other', async () => {
    const u = await registerUser(a.url, { ip: '10.9.0.4' });
    const key = await request(`${a.url}/api/v1/api-keys`, { token: u.token, body: { name: 'shared' } });
    expect((await request(`${b.url}/v1/user/profile`, { token: key.body.key })).status).toBe(200);
    expect((await request(`${b.url}/api/v1/api-keys/${key.body.id}`, { token: u.token, method: 'DELETE' })).status).toBe(200);
    expect((await request(`${a.url}/v1/user/profile`, { token: key.body.key })).status).toBe(401);
  });
});

/**
 * Exact windows across instances (CONTRACT §12.2, issue 23): both processes reserve an upper bound of each
 * call in the same Redis window (one Lua script) and settle it to the real use. Against a fake upstream that
 * reports true token counts, the tokens charged to the account in the minute (its usage rows) are exactly
 * the sum of what each call used, and never more than the plan's 20,000.
 */
describe.skipIf(!clusterEnabled)('exact token windows across two server processes on PostgreSQL + Redis', () => {
  let fake: FakeVendor;
  let cluster: Cluster;
  let a: SpawnedServer;
  let b: SpawnedServer;
  const honest = { reply: 'word '.repeat(40), countTokens: true, honourMaxTokens: true, chunkDelayMs: 1 };
  const generate = (base: string, token: string, body: Record<string, unknown>) => request(`${base}/api/v1/generate`, { token, body: { model: 'gpt-test', language: 'typescript', ...body } });

  beforeAll(async () => {
    fake = await startOpenAIFake({ script: honest });
    cluster = await startCluster('exact', { env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_UPSTREAM_RETRIES: '0' } });
    [a, b] = cluster.servers as [SpawnedServer, SpawnedServer];
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
    await fake?.close();
  });

  it('24 concurrent CJK and emoji prompts over both: each charged its reported use, the minute\'s total within 20,000', async () => {
    fake.reset();
    fake.script(honest);
    await awayFromWindowEnd(15);
    const { token } = await registerUser(a.url, { ip: nextIp() });
    const responses = await Promise.all(Array.from({ length: 24 }, (_, i) => generate(i % 2 ? a.url : b.url, token, { prompt: cjkPrompt(i), max_tokens: 300 })));
    const { admitted } = await expectExactBurst({ base: b.url, token, limit: 20_000, responses, minAdmitted: 5, used: (i) => reportedUse(fake, cjkPrompt(i), 40) });
    expect(fake.requests).toHaveLength(admitted);
  });

  it('an upstream that ignores max_tokens, 30 concurrent calls over both: each cut at its cap, the minute\'s total within 20,000', async () => {
    fake.reset();
    fake.script({ ...honest, reply: 'word '.repeat(3_000), honourMaxTokens: false });
    await awayFromWindowEnd(15);
    const { token } = await registerUser(b.url, { ip: nextIp() });
    const prompt = (i: number) => `todo API ${i}`;
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => generate(i % 2 ? a.url : b.url, token, { prompt: prompt(i), max_tokens: 300 })));
    for (const r of responses.filter((x) => x.status === 200)) expect(r.body.finish_reason).toBe('length');
    await expectExactBurst({
      base: a.url, token, limit: 20_000, responses, minAdmitted: 20,
      used: (i) => ({ prompt_tokens: promptTokenBound(buildGenerationMessages(prompt(i), 'typescript', undefined)), completion_tokens: 300 }),
    });
  });
});
