import pg from 'pg';
import { TEST_DATABASE_URL } from './test-server.js';

async function sql(text: string) {
  const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await db.connect();
  try { await db.query(text); } finally { await db.end(); }
}

/**
 * A private PostgreSQL schema for one suite. Kysely's migrator looks for its
 * bookkeeping tables in every schema, so one left behind by another suite
 * would make it skip creating them here: they are created up front.
 */
export async function createPgSchema(schema: string): Promise<void> {
  await sql(`CREATE SCHEMA "${schema}";
    CREATE TABLE "${schema}".kysely_migration (name varchar(255) PRIMARY KEY, timestamp varchar(255) NOT NULL);
    CREATE TABLE "${schema}".kysely_migration_lock (id varchar(255) PRIMARY KEY, is_locked integer NOT NULL DEFAULT 0)`);
}

export const dropPgSchema = (schema: string) => sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
