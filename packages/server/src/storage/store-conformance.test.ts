import { describe } from 'vitest';
import pg from 'pg';
import { migrateToLatest, openDatabase } from './open-database.js';
import { createStore } from './store.js';
import { runStoreConformance } from './store-conformance.js';
import { TEST_DATABASE_URL, uniqueName } from '../../test/helpers/test-server.js';

runStoreConformance('SQLite (in memory)', async () => {
  const handle = await openDatabase({ sqliteFile: ':memory:' });
  await migrateToLatest(handle);
  return { store: createStore(handle), close: () => handle.close() };
});

if (!TEST_DATABASE_URL) console.log('skipping Store conformance: PostgreSQL: TEST_DATABASE_URL is not set');

describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL', () => {
  runStoreConformance('PostgreSQL', async () => {
    const pgSchema = uniqueName('conf');
    const handle = await openDatabase({ databaseUrl: TEST_DATABASE_URL, pgSchema });
    await migrateToLatest(handle);
    return {
      store: createStore(handle),
      async close() {
        await handle.close();
        const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await client.connect();
        try { await client.query(`DROP SCHEMA IF EXISTS "${pgSchema}" CASCADE`); } finally { await client.end(); }
      },
    };
  });
});
