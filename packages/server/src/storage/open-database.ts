import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type { Database } from './database.js';
import { migrationProvider } from './migrations/index.js';

export type DialectName = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: DialectName;
  /** PostgreSQL schema the tables live in (when not the default). */
  schema?: string;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  dataDir?: string;
  /** PostgreSQL schema to use instead of public (tests isolate themselves with one). */
  pgSchema?: string;
  /** SQLite file path; ':memory:' for tests that need no file. */
  sqliteFile?: string;
  /** PostgreSQL: ms to wait for a connection, new or pooled (then the query fails and the request answers 503). */
  connectTimeoutMs?: number;
  /** PostgreSQL: longest a statement may run, in ms. */
  statementTimeoutMs?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const pg = await import('pg');
    // COUNT(*) and BIGINT arrive as strings by default; our counts fit in a JS number.
    pg.default.types.setTypeParser(20, (v: string) => Number(v));
    const pool = new pg.default.Pool({
      connectionString: options.databaseUrl,
      max: 10,
      // Fail fast when PostgreSQL is down or hung; the pool reconnects on its own once it is back.
      connectionTimeoutMillis: options.connectTimeoutMs ?? 3_000,
      statement_timeout: options.statementTimeoutMs ?? 10_000,
      query_timeout: (options.statementTimeoutMs ?? 10_000) + 1_000,
      ...(options.pgSchema ? { options: `-c search_path=${options.pgSchema}` } : {}),
    });
    pool.on('error', () => { /* a dropped idle client is replaced on next use; readiness reports real outages */ });
    if (options.pgSchema) {
      const client = await pool.connect();
      try { await client.query(`CREATE SCHEMA IF NOT EXISTS "${options.pgSchema}"`); } finally { client.release(); }
    }
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: 'postgres', ...(options.pgSchema ? { schema: options.pgSchema } : {}), ping: async () => { await sql`select 1`.execute(db); }, close: () => db.destroy() };
  }
  const Sqlite = (await import('better-sqlite3')).default;
  let file = options.sqliteFile;
  if (!file) {
    const dir = resolve(options.dataDir ?? './data');
    mkdirSync(dir, { recursive: true });
    file = join(dir, 'codeloom.db');
  }
  const sqlite = new Sqlite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('synchronous = NORMAL');
  // Checkpoint the WAL every 10,000 pages (~40 MB) instead of 1,000: pages written again and again (a table's
  // last page, index pages, a usage row) are copied back once per checkpoint, and the checkpoint's fsyncs, which
  // stall the event loop, come 10× less often (docs/performance.md: SQLite write cost per generation −35 %).
  sqlite.pragma('wal_autocheckpoint = 10000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return {
    db,
    dialect: 'sqlite',
    ping: async () => { sqlite.prepare('select 1').get(); },
    close: () => db.destroy(),
  };
}

/**
 * Kysely prepares every statement anew; preparing costs more than running a
 * small indexed query. Our SQL texts are a small fixed set, so keep them.
 */
function withStatementCache<T extends { prepare: (sql: string) => unknown }>(sqlite: T): T {
  const cache = new Map<string, unknown>();
  const prepare = sqlite.prepare.bind(sqlite);
  return new Proxy(sqlite, {
    get(target, prop, receiver) {
      if (prop !== 'prepare') {
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return (sql: string) => {
        let statement = cache.get(sql);
        if (!statement) {
          statement = prepare(sql);
          if (cache.size >= 500) cache.delete(cache.keys().next().value!);
          cache.set(sql, statement);
        }
        return statement;
      };
    },
  });
}

/**
 * Applies every pending migration. Pass the handle (not just its Kysely) so a
 * PostgreSQL schema keeps its own migration tables: Kysely otherwise finds
 * another schema's bookkeeping tables and skips creating its own.
 */
export async function migrateToLatest(target: DatabaseHandle | Kysely<Database>): Promise<string[]> {
  const handle = 'dialect' in target ? target : undefined;
  const db = handle ? handle.db : (target as Kysely<Database>);
  const migrator = new Migrator({ db, provider: migrationProvider, ...(handle?.schema ? { migrationTableSchema: handle.schema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
