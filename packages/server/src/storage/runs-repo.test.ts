import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { migrateToLatest, openDatabase, type DatabaseHandle } from './open-database.js';
import { createStore, type Store } from './store.js';
import type { RunsTable } from './database.js';
import { TEST_DATABASE_URL, uniqueName } from '../../test/helpers/test-server.js';

/**
 * Terminal run states are final in the database itself: every status write is
 * a guarded UPDATE, so of concurrent writers exactly one ends a run and no
 * later write (a stale executor, a second cancel) changes it. On SQLite and PostgreSQL.
 */
function runsRepoSuite(name: string, open: () => Promise<{ handle: DatabaseHandle; drop?: () => Promise<void> }>) {
  describe(`runs repository guards: ${name}`, () => {
    let handle: DatabaseHandle;
    let drop: (() => Promise<void>) | undefined;
    let store: Store;
    let row: RunsTable;
    beforeEach(async () => {
      ({ handle, drop } = await open());
      await migrateToLatest(handle);
      store = createStore(handle);
      const a = await store.accounts.create({ email: 'r@example.com', emailNormalized: 'r@example.com', name: 'R', passwordHash: 'x', plan: 'free' });
      row = {
        id: 'run_guard', user_id: a.user.id, environment: 'production', workflow_id: null, agent_id: null, project_id: null, status: 'queued',
        task: 't', requirements: '{}', spec: '{}', steps: '[]', result: null, tokens_used: 0, error: null,
        created_at: new Date().toISOString(), started_at: null, finished_at: null, api_key_id: null,
      };
      await store.runs.insert(row);
    });
    afterEach(async () => {
      await handle.close();
      await drop?.();
    });

    it('claims a queued run once among concurrent claimers', async () => {
      const claims = await Promise.all(Array.from({ length: 10 }, () => store.runs.saveIfStatus({ ...row, status: 'running' }, ['queued'])));
      expect(claims.filter(Boolean)).toHaveLength(1);
    });

    it('of concurrent ends (succeeded, failed, cancelled), exactly one is stored and it stays', async () => {
      await store.runs.saveIfStatus({ ...row, status: 'running' }, ['queued']);
      const seen = (await store.runs.getById(row.id))!;
      const writes = await Promise.all([
        ...Array.from({ length: 5 }, (_, i) => store.runs.saveIfStatus({ ...row, status: 'succeeded', tokens_used: i }, ['running'])),
        ...Array.from({ length: 5 }, () => store.runs.saveIfUnchanged({ ...row, status: 'cancelled' }, seen)),
        ...Array.from({ length: 5 }, () => store.runs.saveIfStatus({ ...row, status: 'failed' }, ['queued', 'running'])),
      ]);
      expect(writes.filter(Boolean)).toHaveLength(1);
      const final = (await store.runs.getById(row.id))!.status;
      expect(['succeeded', 'cancelled', 'failed']).toContain(final);
      // Nothing rewrites a finished run, whatever status the writer names.
      for (const status of ['running', 'queued', 'succeeded', 'failed', 'cancelled']) {
        expect(await store.runs.saveIfStatus({ ...row, status }, ['queued', 'running', 'succeeded', 'failed', 'cancelled'])).toBe(false);
      }
      expect(await store.runs.saveIfUnchanged({ ...row, status: 'cancelled' }, (await store.runs.getById(row.id))!)).toBe(false);
      expect((await store.runs.getById(row.id))!.status).toBe(final);
    });

    it('keeps the API key a run was started with, which no later save changes', async () => {
      const keyed = { ...row, id: 'run_keyed', api_key_id: 'key_0123456789' };
      await store.runs.insert(keyed);
      expect((await store.runs.getById(keyed.id))!.api_key_id).toBe('key_0123456789');
      expect(await store.runs.saveIfStatus({ ...keyed, status: 'running', api_key_id: null }, ['queued'])).toBe(true);
      expect((await store.runs.getById(keyed.id))!).toMatchObject({ status: 'running', api_key_id: 'key_0123456789' });
      expect((await store.runs.getById(row.id))!.api_key_id).toBeNull();
    });

    it('a write from a stale read of the steps changes nothing', async () => {
      await store.runs.saveIfStatus({ ...row, status: 'running', steps: '[1]' }, ['queued']);
      const stale = (await store.runs.getById(row.id))!;
      expect(await store.runs.saveIfStatus({ ...row, status: 'running', steps: '[1,2]' }, ['running'])).toBe(true);
      expect(await store.runs.saveIfUnchanged({ ...row, status: 'cancelled', steps: '[1]' }, stale)).toBe(false);
      expect((await store.runs.getById(row.id))!).toMatchObject({ status: 'running', steps: '[1,2]' });
    });
  });
}

runsRepoSuite('SQLite', async () => ({ handle: await openDatabase({ sqliteFile: ':memory:' }) }));

if (!TEST_DATABASE_URL) console.log('skipping runs repository guards on PostgreSQL: TEST_DATABASE_URL is not set');
describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL', () => {
  runsRepoSuite('PostgreSQL', async () => {
    const pgSchema = uniqueName('runs_guard');
    return {
      handle: await openDatabase({ databaseUrl: TEST_DATABASE_URL, pgSchema }),
      async drop() {
        const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await client.connect();
        try { await client.query(`DROP SCHEMA IF EXISTS "${pgSchema}" CASCADE`); } finally { await client.end(); }
      },
    };
  });
});
