/**
 * A password change ends the account's other sessions on every instance (issue 26, CONTRACT §12.5): two
 * server processes on one PostgreSQL and one Redis. Changed through A with session 1, session 2's access
 * token is refused by A and B within a second, its refresh token is dead, and its WebSocket on B closes
 * with 4401; session 1 stays signed in on both instances, its own socket on B open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterEnabled, startCluster, type Cluster } from './helpers/cluster.js';
import { nextIp } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { bye, connect, type WsClient } from './helpers/ws-client.js';

if (!clusterEnabled) console.log('skipping the two-instance password change test: it needs TEST_DATABASE_URL and TEST_REDIS_URL');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function closedWithin(c: WsClient, ms: number): Promise<{ code: number; reason: string }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`socket still open ${ms} ms later`)), ms); });
  return Promise.race([c.closed, late]).finally(() => clearTimeout(timer));
}

describe.skipIf(!clusterEnabled)('a password change ends the other sessions on every instance', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startCluster('pwchange');
  }, 90_000);
  afterAll(async () => { await cluster?.stop(); });

  it('within a second: the other session\'s token is refused on both instances and its socket closes; this one goes on', async () => {
    const [a, b] = cluster.servers as [typeof cluster.servers[0], typeof cluster.servers[0]];
    const u = await registerUser(a.url, { ip: nextIp() });
    const other = (await request(`${b.url}/api/v1/auth/login`, { body: { email: u.email, password: u.password }, headers: { 'x-forwarded-for': nextIp() } })).body;
    const otherWs = await connect(b.url, other.token);
    const ownWs = await connect(b.url, u.token);
    for (const base of [a.url, b.url]) expect((await request(`${base}/api/v1/auth/verify`, { token: other.token })).status).toBe(200);

    const changed = await request(`${a.url}/api/v1/auth/password`, { token: u.token, body: { current_password: u.password, new_password: 'a brand new passphrase' }, headers: { 'x-forwarded-for': nextIp() } });
    expect(changed.status, changed.text).toBe(200);
    const at = Date.now();

    expect(await closedWithin(otherWs, 1_000)).toEqual({ code: 4401, reason: 'credential_revoked' });
    for (const base of [a.url, b.url]) {
      const refused = await request(`${base}/api/v1/auth/verify`, { token: other.token });
      expect(refused.status).toBe(401);
      expect(refused.body.code).toBe('invalid_token');
    }
    expect(Date.now() - at).toBeLessThan(1_000);
    expect((await request(`${b.url}/api/v1/auth/refresh`, { body: { refresh_token: other.refreshToken } })).status).toBe(401);

    // The calling session: signed in on both instances, its socket still answers.
    for (const base of [a.url, b.url]) expect((await request(`${base}/api/v1/auth/verify`, { token: u.token })).status).toBe(200);
    await sleep(200);
    expect((await ownWs.ping()).event).toBe('pong');
    await bye(ownWs);
  });
});
