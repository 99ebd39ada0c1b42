import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpawnedServer } from './helpers/spawn-server.js';
import { clusterEnabled, startCluster, type Cluster } from './helpers/cluster.js';
import { registerUser, request } from './helpers/http.js';

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
