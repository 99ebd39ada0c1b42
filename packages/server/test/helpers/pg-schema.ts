import pg from 'pg';
import { TEST_DATABASE_URL } from './test-server.js';

async function withClient(work: (db: pg.Client) => Promise<unknown>): Promise<void> {
  const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await db.connect();
  try { await work(db); } finally { await db.end(); }
}

/** Creates a suite's private PostgreSQL schema (for spawned servers, which do not create theirs). */
export const createPgSchema = (schema: string) => withClient((db) => db.query(`CREATE SCHEMA "${schema}"`));

/** Drops a suite's private PostgreSQL schema (startTestServer and openDatabase create them; nothing else removes them). */
export const dropPgSchema = (schema: string) => withClient((db) => db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
