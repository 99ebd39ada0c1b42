import pg from 'pg';
import { TEST_DATABASE_URL } from './test-server.js';

/** Drops a suite's private PostgreSQL schema (startTestServer and openDatabase create them; nothing else removes them). */
export async function dropPgSchema(schema: string): Promise<void> {
  const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await db.connect();
  try { await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`); } finally { await db.end(); }
}
