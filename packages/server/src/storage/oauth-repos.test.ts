import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase } from './open-database.js';
import { createStore, type Store } from './store.js';
import type { NewOAuthToken } from './repos/oauth-grants-repo.js';
import { TEST_DATABASE_URL, uniqueName } from '../../test/helpers/test-server.js';
import { dropPgSchema } from '../../test/helpers/pg-schema.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
const hash = (label: string) => `${label}-${Math.random().toString(16).slice(2)}`.padEnd(64, '0').slice(0, 64);

/** The OAuth repositories behave the same on every dialect: single use is atomic, revocation reaches the whole grant, deletion cascades. */
function runOAuthRepoSuite(name: string, open: () => Promise<{ store: Store; close(): Promise<void> }>) {
  describe(`OAuth repositories: ${name}`, () => {
    let env: { store: Store; close(): Promise<void> } | undefined;
    let store: Store;
    beforeEach(async () => { env = await open(); store = env.store; });
    afterEach(async () => { await env?.close(); env = undefined; });

    let n = 0;
    async function fixture() {
      n += 1;
      const account = await store.accounts.create({ email: `p${n}@example.com`, emailNormalized: `p${n}@example.com`, name: `P${n}`, passwordHash: 'x', plan: 'free' });
      const client = await store.oauthClients.create({ userId: account.user.id, name: 'App', type: 'confidential', secretHash: hash('secret'), redirectUris: ['https://app.example/cb'], scopes: ['read:code'] });
      return { userId: account.user.id, client };
    }
    const tokens = (ttl = 60): NewOAuthToken[] => [
      { hash: hash('at'), kind: 'access', scopes: ['read:code'], expiresAt: inSeconds(ttl) },
      { hash: hash('rt'), kind: 'refresh', scopes: ['read:code'], expiresAt: inSeconds(ttl) },
    ];

    it('stores clients with ISO timestamps and lists, finds and deletes them for their owner only', async () => {
      const { userId, client } = await fixture();
      const other = await fixture();
      expect(client.id).toMatch(/^cli_/);
      expect(client.created_at).toMatch(ISO);
      expect(await store.oauthClients.findById(client.id)).toEqual(client);
      expect((await store.oauthClients.list(userId, 1, 10))).toEqual({ rows: [client], total: 1 });
      expect(await store.oauthClients.delete(other.userId, client.id)).toBe(false);
      expect(await store.oauthClients.delete(userId, client.id)).toBe(true);
      expect(await store.oauthClients.findById(client.id)).toBeUndefined();
    });

    it('spends a code exactly once under concurrency, and a replay revokes the grant it issued', async () => {
      const { userId, client } = await fixture();
      const codeHash = hash('code');
      await store.oauthGrants.saveCode({ codeHash, clientId: client.id, userId, redirectUri: 'https://app.example/cb', scopes: ['read:code'], codeChallenge: 'c'.repeat(43), codeChallengeMethod: 'S256', expires_at: inSeconds(60) });
      const code = await store.oauthGrants.findCode(codeHash);
      expect(code).toMatchObject({ clientId: client.id, userId, scopes: ['read:code'], codeChallenge: 'c'.repeat(43), used_at: null, replayed_at: null });
      expect(code!.created_at).toMatch(ISO);
      const spends = await Promise.all(Array.from({ length: 8 }, () => store.oauthGrants.spendCode(codeHash)));
      expect(spends.filter(Boolean)).toHaveLength(1);

      const issued = tokens();
      const grantId = await store.oauthGrants.createGrant({ clientId: client.id, userId, codeHash, scopes: ['read:code'], tokens: issued });
      expect(await store.oauthGrants.wasReplayed(codeHash)).toBe(false);
      await store.oauthGrants.revokeReplayedCode(codeHash);
      expect(await store.oauthGrants.wasReplayed(codeHash)).toBe(true);
      expect(await store.oauthGrants.isGrantRevoked(grantId)).toBe(true);
      expect((await store.oauthGrants.findToken(issued[0]!.hash))!.grant.revoked_at).toMatch(ISO);
    });

    it('spends a refresh token exactly once under concurrency; revoking one token leaves its grant alone', async () => {
      const { userId, client } = await fixture();
      const issued = tokens();
      const grantId = await store.oauthGrants.createGrant({ clientId: client.id, userId, codeHash: null, scopes: ['read:code'], tokens: issued });
      const refresh = await store.oauthGrants.findToken(issued[1]!.hash);
      expect(refresh).toMatchObject({ grantId, kind: 'refresh', scopes: ['read:code'], used_at: null, revoked_at: null, grant: { clientId: client.id, userId, revoked_at: null } });
      const spends = await Promise.all(Array.from({ length: 8 }, () => store.oauthGrants.spendRefreshToken(issued[1]!.hash)));
      expect(spends.filter(Boolean)).toHaveLength(1);
      expect(await store.oauthGrants.spendRefreshToken(issued[0]!.hash)).toBe(false); // an access token is never "spent"

      await store.oauthGrants.revokeToken(issued[0]!.hash);
      expect((await store.oauthGrants.findToken(issued[0]!.hash))!.revoked_at).toMatch(ISO);
      expect(await store.oauthGrants.isGrantRevoked(grantId)).toBe(false);
    });

    it('deleting a client deletes its codes, grants and tokens', async () => {
      const { userId, client } = await fixture();
      const codeHash = hash('code');
      await store.oauthGrants.saveCode({ codeHash, clientId: client.id, userId, redirectUri: 'https://app.example/cb', scopes: ['read:code'], codeChallenge: null, codeChallengeMethod: null, expires_at: inSeconds(60) });
      const issued = tokens();
      await store.oauthGrants.createGrant({ clientId: client.id, userId, codeHash, scopes: ['read:code'], tokens: issued });
      await store.oauthClients.delete(userId, client.id);
      expect(await store.oauthGrants.findCode(codeHash)).toBeUndefined();
      expect(await store.oauthGrants.findToken(issued[0]!.hash)).toBeUndefined();
    });

    it('purges what expired before a moment, and the grants left empty, but nothing alive', async () => {
      const { userId, client } = await fixture();
      const old = tokens(-7200);
      const live = tokens(3600);
      const oldGrant = await store.oauthGrants.createGrant({ clientId: client.id, userId, codeHash: null, scopes: ['read:code'], tokens: old });
      await store.handle.db.updateTable('oauth_grants').set({ created_at: inSeconds(-7200) }).where('id', '=', oldGrant).execute();
      await store.oauthGrants.createGrant({ clientId: client.id, userId, codeHash: null, scopes: ['read:code'], tokens: live });
      await store.oauthGrants.purgeExpired(inSeconds(-3600));
      expect(await store.oauthGrants.findToken(old[0]!.hash)).toBeUndefined();
      expect(await store.oauthGrants.isGrantRevoked(oldGrant)).toBe(true); // gone
      expect(await store.oauthGrants.findToken(live[1]!.hash)).toBeDefined();
    });

    it('finds a browser session only while it lasts, and never by its raw value', async () => {
      const { userId } = await fixture();
      const live = hash('ws');
      const dead = hash('ws');
      await store.webSessions.create(live, userId, inSeconds(60));
      await store.webSessions.create(dead, userId, inSeconds(-1));
      expect(await store.webSessions.findUserId(live)).toBe(userId);
      expect(await store.webSessions.findUserId(dead)).toBeUndefined();
      await store.webSessions.purgeExpired(inSeconds(0));
      expect(await store.handle.db.selectFrom('web_sessions').select('token_hash').execute()).toEqual([{ token_hash: live }]);
      await store.webSessions.delete(live);
      expect(await store.webSessions.findUserId(live)).toBeUndefined();
    });
  });
}

runOAuthRepoSuite('SQLite (in memory)', async () => {
  const handle = await openDatabase({ sqliteFile: ':memory:' });
  await migrateToLatest(handle);
  return { store: createStore(handle), close: () => handle.close() };
});

if (!TEST_DATABASE_URL) console.log('skipping OAuth repositories: PostgreSQL: TEST_DATABASE_URL is not set');
describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL', () => {
  runOAuthRepoSuite('PostgreSQL', async () => {
    const pgSchema = uniqueName('oauth');
    try {
      const handle = await openDatabase({ databaseUrl: TEST_DATABASE_URL, pgSchema });
      await migrateToLatest(handle);
      return { store: createStore(handle), close: async () => { await handle.close(); await dropPgSchema(pgSchema); } };
    } catch (error) {
      await dropPgSchema(pgSchema);
      throw error;
    }
  });
});
