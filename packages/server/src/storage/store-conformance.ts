import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from './store.js';
import { UniqueViolation } from '../errors.js';

/**
 * One behaviour for every storage backend: each repository is exercised
 * through the Store interface only, so SQLite and PostgreSQL (and any later
 * dialect) must agree. Each test gets a fresh, empty store.
 */
export function runStoreConformance(name: string, createStore: () => Promise<{ store: Store; close(): Promise<void> }>): void {
  describe(`Store conformance: ${name}`, () => {
    let env: { store: Store; close(): Promise<void> } | undefined;
    let store: Store;
    beforeEach(async () => {
      env = await createStore();
      store = env.store;
    });
    afterEach(async () => {
      await env?.close();
      env = undefined;
    });

    const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
    const tick = () => new Promise((r) => setTimeout(r, 3));
    const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
    let n = 0;
    const account = (overrides: { email?: string; plan?: 'free' | 'pro' | 'enterprise' } = {}) => {
      n += 1;
      const email = overrides.email ?? `Person${n}@Example.com`;
      return store.accounts.create({ email, emailNormalized: email.toLowerCase(), name: `Person ${n}`, passwordHash: `$argon2id$hash${n}`, plan: overrides.plan ?? 'free' });
    };
    const session = (userId: string, refreshHash: string, expiresAt = inSeconds(3600)) =>
      store.sessions.create({ userId, environment: 'production', refreshHash, refreshExpiresAt: expiresAt });
    const key = (userId: string, name: string, opts: { environment?: 'production' | 'sandbox'; hash?: string } = {}) =>
      store.apiKeys.create({ userId, name, prefix: 'cl_live_abcd', keyHash: opts.hash ?? `hash-${name}-${Math.random()}`, scopes: ['read:code'], environment: opts.environment ?? 'production', expiresAt: null });

    describe('accounts', () => {
      it('creates a user with a personal organization and finds it by normalized email and by id', async () => {
        const created = await account({ email: 'Ada@Example.com' });
        expect(created.user.id).toMatch(/^usr_/);
        expect(created.org.id).toMatch(/^org_/);
        expect(created.org.plan).toBe('free');
        expect(created.user.created_at).toMatch(ISO);
        const byEmail = await store.accounts.findByEmail('ada@example.com');
        expect(byEmail).toEqual({ ...created, passwordHash: expect.stringMatching(/^\$argon2id\$/) });
        expect(byEmail!.user.email).toBe('Ada@Example.com');
        const byId = await store.accounts.findById(created.user.id);
        expect(byId).toEqual(created);
        expect(byId).not.toHaveProperty('passwordHash');
        expect(await store.accounts.findByEmail('nobody@example.com')).toBeUndefined();
        expect(await store.accounts.findById('usr_missing')).toBeUndefined();
      });

      it('refuses a second account with the same normalized email (UniqueViolation) and leaves nothing behind', async () => {
        await account({ email: 'dup@example.com' });
        await expect(account({ email: 'DUP@example.com' })).rejects.toBeInstanceOf(UniqueViolation);
        expect((await store.accounts.list(1, 10)).total).toBe(1);
        const orgs = await store.handle.db.selectFrom('organizations').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        expect(Number(orgs.n)).toBe(1);
      });

      it('of concurrent creations with one email, exactly one succeeds and the rest are UniqueViolation', async () => {
        const results = await Promise.allSettled(Array.from({ length: 8 }, () => account({ email: 'race@example.com' })));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(UniqueViolation);
        expect((await store.accounts.list(1, 10)).total).toBe(1);
      });

      it('sets the plan by email, for that account only', async () => {
        const a = await account();
        const b = await account();
        expect(await store.accounts.setPlanByEmail(a.user.email.toLowerCase(), 'enterprise')).toBe(true);
        expect((await store.accounts.findById(a.user.id))!.org.plan).toBe('enterprise');
        expect((await store.accounts.findById(b.user.id))!.org.plan).toBe('free');
        expect(await store.accounts.setPlanByEmail('nobody@example.com', 'pro')).toBe(false);
      });

      it('lists accounts oldest first, page by page, with the total', async () => {
        const made = [];
        for (let i = 0; i < 5; i++) { made.push(await account()); await tick(); }
        const p1 = await store.accounts.list(1, 2);
        const p3 = await store.accounts.list(3, 2);
        expect(p1.total).toBe(5);
        expect(p1.rows.map((r) => r.user.id)).toEqual([made[0]!.user.id, made[1]!.user.id]);
        expect(p3.rows.map((r) => r.user.id)).toEqual([made[4]!.user.id]);
        expect((await store.accounts.list(4, 2)).rows).toEqual([]);
        expect(p1.rows[0]).not.toHaveProperty('passwordHash');
      });
    });

    describe('sessions', () => {
      it('rotates a refresh token once; the successor rotates in turn', async () => {
        const a = await account();
        const { id } = await session(a.user.id, 'r1');
        expect(id).toEqual(expect.any(String));
        expect(await store.sessions.isRevoked(id)).toBe(false);
        expect(await store.sessions.rotate('r1', 'r2', inSeconds(3600))).toEqual({ status: 'rotated', sessionId: id, userId: a.user.id, environment: 'production' });
        expect(await store.sessions.rotate('r2', 'r3', inSeconds(3600))).toMatchObject({ status: 'rotated', sessionId: id });
        expect(await store.sessions.rotate('unknown', 'x', inSeconds(3600))).toEqual({ status: 'invalid' });
      });

      it('a reused refresh token revokes the whole session, so its newest token is invalid too', async () => {
        const a = await account();
        const { id } = await session(a.user.id, 'r1');
        await store.sessions.rotate('r1', 'r2', inSeconds(3600));
        expect(await store.sessions.rotate('r1', 'x', inSeconds(3600))).toEqual({ status: 'reused', sessionId: id, userId: a.user.id });
        expect(await store.sessions.isRevoked(id)).toBe(true);
        expect(await store.sessions.rotate('r2', 'r3', inSeconds(3600))).toEqual({ status: 'invalid' });
      });

      it('two concurrent rotations of one token: exactly one wins, the other is reuse', async () => {
        const a = await account();
        await session(a.user.id, 'race');
        const results = await Promise.all([
          store.sessions.rotate('race', 'next-a', inSeconds(3600)),
          store.sessions.rotate('race', 'next-b', inSeconds(3600)),
        ]);
        expect(results.map((r) => r.status).sort()).toEqual(['reused', 'rotated']);
      });

      it('refuses an expired refresh token and any token of a revoked session', async () => {
        const a = await account();
        await session(a.user.id, 'old', new Date(Date.now() - 1000).toISOString());
        expect(await store.sessions.rotate('old', 'x', inSeconds(3600))).toEqual({ status: 'invalid' });
        const { id } = await session(a.user.id, 'live');
        await store.sessions.revoke(id, 'logout');
        expect(await store.sessions.isRevoked(id)).toBe(true);
        expect(await store.sessions.rotate('live', 'y', inSeconds(3600))).toEqual({ status: 'invalid' });
        expect(await store.sessions.isRevoked('ses_missing')).toBe(true);
      });

      it('lists sessions revoked since a time, and only those', async () => {
        const a = await account();
        const before = new Date(Date.now() - 1000).toISOString();
        const kept = await session(a.user.id, 'k');
        const revoked = await session(a.user.id, 'v');
        await store.sessions.revoke(revoked.id, 'logout');
        const since = await store.sessions.revokedSince(before);
        expect(since).toContain(revoked.id);
        expect(since).not.toContain(kept.id);
        expect(await store.sessions.revokedSince(inSeconds(60))).toEqual([]);
      });
    });

    describe('API keys', () => {
      it('creates a key and finds it by hash, scopes and times intact', async () => {
        const a = await account();
        const expiresAt = inSeconds(600);
        const created = await store.apiKeys.create({ userId: a.user.id, name: 'ci', prefix: 'cl_live_abcd', keyHash: 'h-ci', scopes: ['read:code', 'write:code'], environment: 'production', expiresAt });
        expect(created).toMatchObject({ id: expect.stringMatching(/^key_/), userId: a.user.id, name: 'ci', prefix: 'cl_live_abcd', scopes: ['read:code', 'write:code'], environment: 'production', last_used_at: null, expires_at: expiresAt, revoked_at: null });
        expect(created.created_at).toMatch(ISO);
        expect(await store.apiKeys.findByHash('h-ci')).toEqual(created);
        expect(await store.apiKeys.findByHash('h-none')).toBeUndefined();
      });

      it('lists one user\'s active keys of one environment, newest first, page by page', async () => {
        const a = await account();
        const b = await account();
        const made = [];
        for (let i = 0; i < 3; i++) { made.push(await key(a.user.id, `k${i}`)); await tick(); }
        await key(a.user.id, 'sandboxed', { environment: 'sandbox' });
        await key(b.user.id, 'other-user');
        const p1 = await store.apiKeys.list(a.user.id, 'production', 1, 2);
        expect(p1.total).toBe(3);
        expect(p1.rows.map((r) => r.name)).toEqual(['k2', 'k1']);
        expect((await store.apiKeys.list(a.user.id, 'production', 2, 2)).rows.map((r) => r.name)).toEqual(['k0']);
        expect((await store.apiKeys.list(a.user.id, 'sandbox', 1, 10)).rows.map((r) => r.name)).toEqual(['sandboxed']);
        await store.apiKeys.revoke(a.user.id, 'production', made[1]!.id);
        const after = await store.apiKeys.list(a.user.id, 'production', 1, 10);
        expect(after.total).toBe(2);
        expect(after.rows.map((r) => r.name)).toEqual(['k2', 'k0']);
      });

      it('revokes only the owner\'s key, once', async () => {
        const a = await account();
        const b = await account();
        const k = await key(a.user.id, 'mine', { hash: 'h-mine' });
        expect(await store.apiKeys.revoke(b.user.id, 'production', k.id)).toBe(false);
        expect(await store.apiKeys.revoke(a.user.id, 'sandbox', k.id)).toBe(false);
        expect((await store.apiKeys.findByHash('h-mine'))!.revoked_at).toBeNull();
        expect(await store.apiKeys.revoke(a.user.id, 'production', k.id)).toBe(true);
        expect((await store.apiKeys.findByHash('h-mine'))!.revoked_at).toMatch(ISO);
        expect(await store.apiKeys.revoke(a.user.id, 'production', k.id)).toBe(false);
      });

      it('answers whether a key is revoked, and lists the keys revoked since a time (the revocation store reloads from them)', async () => {
        const a = await account();
        const before = new Date(Date.now() - 1000).toISOString();
        const k = await key(a.user.id, 'gone', { hash: 'h-gone' });
        const kept = await key(a.user.id, 'kept', { hash: 'h-kept' });
        expect(await store.apiKeys.isRevoked(k.id)).toBe(false);
        await store.apiKeys.revoke(a.user.id, 'production', k.id);
        expect(await store.apiKeys.isRevoked(k.id)).toBe(true);
        expect(await store.apiKeys.isRevoked(kept.id)).toBe(false);
        expect(await store.apiKeys.isRevoked('key_unknown')).toBe(true);
        const since = await store.apiKeys.revokedSince(before);
        expect(since).toContain(k.id);
        expect(since).not.toContain(kept.id);
        expect(await store.apiKeys.revokedSince(new Date(Date.now() + 60_000).toISOString())).not.toContain(k.id);
      });

      it('records the last use', async () => {
        const a = await account();
        const k = await key(a.user.id, 'used', { hash: 'h-used' });
        const at = new Date().toISOString();
        await store.apiKeys.touch(k.id, at);
        expect((await store.apiKeys.findByHash('h-used'))!.last_used_at).toBe(at);
        expect((await store.apiKeys.list(a.user.id, 'production', 1, 10)).rows[0]!.last_used_at).toBe(at);
      });
    });

    describe('budgets', () => {
      const budget = (orgId: string, userId: string, scope: { type: 'organization' | 'member' | 'api_key'; id: string }, period: 'day' | 'month' | 'total' = 'month', id = `bud_${Math.random().toString(36).slice(2)}`) => ({
        id, orgId, userId, scope, amountMicros: 2_500_000_000_000, period, alertThresholds: [0.5, 0.8, 1], createdAt: new Date().toISOString(), updatedAt: new Date().toISOString(),
      });
      const use = (userId: string, apiKeyId: string | null, day: string, costMicros: number, environment: 'production' | 'sandbox' = 'production') =>
        store.usage.record({ userId, environment, apiKeyId, model: 'm', day, failed: false, promptTokens: 1, completionTokens: 1, costMicros });

      it('keeps a budget (amounts past 2^32 micro-dollars exact), lists, changes and deletes it only within its organization', async () => {
        const a = await account();
        const b = await account();
        const mine = budget(a.org.id, a.user.id, { type: 'organization', id: a.org.id });
        await store.budgets.insert(mine);
        await store.budgets.insert(budget(b.org.id, b.user.id, { type: 'member', id: b.user.id }, 'day'));
        expect(await store.budgets.get(a.org.id, mine.id)).toEqual(mine);
        expect(await store.budgets.get(b.org.id, mine.id)).toBeUndefined();
        expect((await store.budgets.listByOrg(a.org.id)).map((x) => x.id)).toEqual([mine.id]);
        expect(await store.budgets.countByOrg(a.org.id)).toBe(1);
        expect(await store.budgets.update({ ...mine, orgId: b.org.id, amountMicros: 1 })).toBe(false);
        expect(await store.budgets.update({ ...mine, amountMicros: 7, period: 'total', alertThresholds: [] })).toBe(true);
        expect(await store.budgets.get(a.org.id, mine.id)).toMatchObject({ amountMicros: 7, period: 'total', alertThresholds: [] });
        expect(await store.budgets.delete(b.org.id, mine.id)).toBe(false);
        expect(await store.budgets.delete(a.org.id, mine.id)).toBe(true);
        expect(await store.budgets.listByOrg(a.org.id)).toEqual([]);
      });

      it("sums what a scope spent since a day from the usage rows, never the sandbox environment's", async () => {
        const a = await account();
        const other = await account();
        const k = await key(a.user.id, 'ci');
        await Promise.all([
          use(a.user.id, null, '2026-10-31', 1_000),
          use(a.user.id, null, '2026-11-01', 20),
          use(a.user.id, k.id, '2026-11-02', 300),
          use(a.user.id, null, '2026-11-02', 4_000, 'sandbox'),
          use(other.user.id, null, '2026-11-02', 50_000),
        ]);
        expect(await store.budgets.spentMicros(a.org.id, { type: 'organization', id: a.org.id }, '2026-11-01')).toBe(320);
        expect(await store.budgets.spentMicros(a.org.id, { type: 'organization', id: a.org.id }, '')).toBe(1_320);
        expect(await store.budgets.spentMicros(a.org.id, { type: 'member', id: a.user.id }, '2026-11-02')).toBe(300);
        expect(await store.budgets.spentMicros(a.org.id, { type: 'api_key', id: k.id }, '')).toBe(300);
        expect(await store.budgets.spentMicros(a.org.id, { type: 'api_key', id: 'key_none' }, '')).toBe(0);
      });
    });

    describe('stored responses', () => {
      it('answers and deletes a response only within its organization and environment and before it expires; the cleanup deletes expired rows only', async () => {
        const a = await account();
        const b = await account();
        const now = new Date().toISOString();
        const row = (id: string, expiresAt: string, environment = 'production') => ({
          id, org_id: a.org.id, user_id: a.user.id, environment, response: `{"id":"${id}","text":"é ✓"}`, conversation: '[{"role":"user","content":"hi"}]', created_at: now, expires_at: expiresAt,
        });
        const scope = { orgId: a.org.id, environment: 'production' };
        await store.responses.insert(row('resp_live', inSeconds(3600)));
        await store.responses.insert(row('resp_sbx', inSeconds(3600), 'sandbox'));
        await store.responses.insert(row('resp_old', inSeconds(-1)));
        expect(await store.responses.get(scope, 'resp_live', now)).toEqual(row('resp_live', expect.any(String)));
        expect(await store.responses.get({ orgId: b.org.id, environment: 'production' }, 'resp_live', now)).toBeUndefined();
        expect(await store.responses.get(scope, 'resp_sbx', now)).toBeUndefined();
        expect(await store.responses.get({ ...scope, environment: 'sandbox' }, 'resp_sbx', now)).toBeDefined();
        expect(await store.responses.get(scope, 'resp_old', new Date().toISOString())).toBeUndefined();
        expect(await store.responses.delete({ orgId: b.org.id, environment: 'production' }, 'resp_live', now)).toBe(false);
        expect(await store.responses.delete(scope, 'resp_old', new Date().toISOString())).toBe(false);
        await store.responses.insert(row('resp_old2', inSeconds(-2)));
        await store.responses.insert(row('resp_old3', inSeconds(-3)));
        expect(await store.responses.deleteExpired(new Date().toISOString(), 2)).toBe(3);
        expect(await store.responses.deleteExpired(new Date().toISOString(), 2)).toBe(0);
        expect(await store.responses.delete(scope, 'resp_live', now)).toBe(true);
        expect(await store.responses.delete(scope, 'resp_live', now)).toBe(false);
        expect(await store.responses.get({ ...scope, environment: 'sandbox' }, 'resp_sbx', now)).toBeDefined();
      });
    });

    describe('signing keys', () => {
      const row = (kid: string, created_at: string, tag = kid) => ({ kid, alg: 'EdDSA', private_jwk: `{"d":"${tag}"}`, public_jwk: `{"x":"${tag}"}`, created_at });

      it('lists keys oldest first (kid breaks ties) and ignores a duplicate kid', async () => {
        expect(await store.signingKeys.list()).toEqual([]);
        await store.signingKeys.insert(row('kid-c', '2026-01-02T00:00:00.000Z'));
        await store.signingKeys.insert(row('kid-b', '2026-01-01T00:00:00.000Z'));
        await store.signingKeys.insert(row('kid-a', '2026-01-02T00:00:00.000Z'));
        await store.signingKeys.insert(row('kid-b', '2025-01-01T00:00:00.000Z', 'impostor'));
        const rows = await store.signingKeys.list();
        expect(rows.map((r) => r.kid)).toEqual(['kid-b', 'kid-a', 'kid-c']);
        expect(rows[0]).toEqual(row('kid-b', '2026-01-01T00:00:00.000Z'));
      });
    });
  });
}
