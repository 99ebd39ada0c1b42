import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake, type FakeVendor } from './fakes/openai-fake.js';
import { clusterEnabled, startCluster, type Cluster } from './helpers/cluster.js';
import { registerUser, request } from './helpers/http.js';

if (!clusterEnabled) console.log('deployments-cluster.e2e: skipped, set TEST_DATABASE_URL and TEST_REDIS_URL (PostgreSQL + Redis) to run it');

/**
 * A deployment change reaches every instance within 2 s without a restart (CONTRACT §12.4): two server
 * processes on one PostgreSQL schema and Redis; changes made through one are served by the other. The
 * periodic reload is set to an hour, so only the change notice can carry them. The API key is in neither
 * process's log.
 */
describe.skipIf(!clusterEnabled)('deployments across instances', () => {
  const SECRET = 'sk-cluster-SECRET-5d1e';
  let cluster: Cluster;
  let a: FakeVendor, b: FakeVendor;
  let admin: Awaited<ReturnType<typeof registerUser>>;
  const chat = (url: string, model: string) =>
    request(`${url}/openai/v1/chat/completions`, { token: admin.token, body: { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 } });
  /** Milliseconds until `check` holds on `url` (polled every 50 ms), failing past `limitMs`. */
  const until = async (check: () => Promise<boolean>, limitMs = 2000): Promise<number> => {
    const t0 = Date.now();
    while (!(await check())) {
      if (Date.now() - t0 > limitMs) throw new Error(`not within ${limitMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return Date.now() - t0;
  };

  beforeAll(async () => {
    [a, b] = await Promise.all([startOpenAIFake({ record: true, script: { requireApiKey: SECRET } }), startOpenAIFake({ record: true })]);
    cluster = await startCluster('deploy', { env: { CODELOOM_DEPLOYMENTS_RELOAD: '3600', CODELOOM_SECRET_KEY: 'cluster-key', LOG_LEVEL: 'debug', CODELOOM_REQUEST_LOG: 'all' } });
    admin = await registerUser(cluster.servers[0]!.url, { ip: '10.26.0.1' });
  }, 60_000);
  afterAll(async () => { await cluster?.stop(); await Promise.all([a, b].map((f) => f?.close())); });

  it('a deployment added, changed and removed on one instance is live on the other within 2 s', async () => {
    const [one, two] = cluster.servers.map((s) => s.url) as [string, string];
    expect((await chat(two, 'shared')).status).toBe(404);
    const created = await request(`${one}/api/v1/admin/deployments`, { token: admin.token, body: { name: 'gpu-a', provider: 'openai', base_url: `${a.url}/v1`, api_key: SECRET, models: [{ id: 'shared', upstream_model: 'shared-a', price: { input: 1, output: 1 } }] } });
    expect(created.status, created.text).toBe(201);
    // Added: instance two serves it (with the key, decrypted there).
    await until(async () => (await chat(two, 'shared')).status === 200);
    expect(a.requests.at(-1)!.headers.authorization).toBe(`Bearer ${SECRET}`);
    // A second deployment, then the first disabled: instance two moves to the second.
    const second = await request(`${one}/api/v1/admin/deployments`, { token: admin.token, body: { name: 'gpu-b', provider: 'openai', base_url: `${b.url}/v1`, models: [{ id: 'shared', upstream_model: 'shared-b', price: { input: 1, output: 1 } }] } });
    expect(second.status).toBe(201);
    expect((await request(`${one}/api/v1/admin/deployments/${created.body.id}`, { method: 'PATCH', token: admin.token, body: { enabled: false } })).status).toBe(200);
    await until(async () => {
      const before = a.requests.length;
      const results = await Promise.all(Array.from({ length: 6 }, () => chat(two, 'shared')));
      return results.every((r) => r.status === 200) && a.requests.length === before;
    });
    // Health as instance two sees it: disabled.
    const seen = await request(`${two}/api/v1/admin/deployments/${created.body.id}`, { token: admin.token });
    expect(seen.body.health.status).toBe('disabled');
    // Removed: gone on instance two.
    for (const id of [created.body.id, second.body.id]) expect((await request(`${one}/api/v1/admin/deployments/${id}`, { method: 'DELETE', token: admin.token })).status).toBe(200);
    await until(async () => (await chat(two, 'shared')).status === 404);
  });

  it('a deployment\'s rpm holds across both instances; the other deployment takes the rest', async () => {
    const [one, two] = cluster.servers.map((s) => s.url) as [string, string];
    // Away from a minute boundary, so every call counts in the same one-minute window.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 61_000 - intoMinute));
    const before = { a: a.requests.length, b: b.requests.length };
    const small = await request(`${one}/api/v1/admin/deployments`, { token: admin.token, body: { name: 'small', provider: 'openai', base_url: `${a.url}/v1`, api_key: SECRET, weight: 1000, rpm: 3, models: [{ id: 'quota', price: { input: 0, output: 0 } }] } });
    const big = await request(`${one}/api/v1/admin/deployments`, { token: admin.token, body: { name: 'big', provider: 'openai', base_url: `${b.url}/v1`, weight: 1, models: [{ id: 'quota', price: { input: 0, output: 0 } }] } });
    await until(async () => (await chat(two, 'quota')).status === 200);
    for (let i = 0; i < 10; i++) expect((await chat(i % 2 ? one : two, 'quota')).status).toBe(200);
    // The heavy deployment took exactly its 3 calls a minute, whichever instance they came through.
    expect(a.requests.length - before.a).toBe(3);
    expect(b.requests.length - before.b).toBe(11 - 3);
    for (const d of [small, big]) await request(`${one}/api/v1/admin/deployments/${d.body.id}`, { method: 'DELETE', token: admin.token });
  }, 90_000);

  it('the API key is in neither instance\'s log', () => {
    for (const s of cluster.servers) {
      expect(s.output().length).toBeGreaterThan(500);
      expect(s.output()).not.toContain(SECRET);
    }
  });
});
