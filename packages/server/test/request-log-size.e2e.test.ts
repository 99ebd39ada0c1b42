/**
 * Retention sizing (docs/operations.md, "Request log"): the bytes one logged call takes on disk, indexes
 * included, bodies off — measured by writing 20,000 realistic rows through the repository (the group commit)
 * into a fresh SQLite file, and on PostgreSQL (TEST_DATABASE_URL) from pg_total_relation_size. The figure is
 * printed; the test fails if a row grows past 600 bytes (900 on PostgreSQL): a column or index added without
 * updating the sizing in docs/operations.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../src/storage/open-database.js';
import { createStore } from '../src/storage/store.js';
import { newId, newTimeOrderedId } from '../src/storage/ids.js';
import { TEST_DATABASE_URL, uniqueName } from './helpers/test-server.js';

const ROWS = 20_000;
const MAX_BYTES_PER_ROW = 600;
/** PostgreSQL's tuple header, item pointers and fill factor cost more per row (664 bytes measured). */
const MAX_BYTES_PER_ROW_PG = 900;

async function fill(handle: DatabaseHandle): Promise<void> {
  const store = createStore(handle);
  const orgs = Array.from({ length: 20 }, () => newId('org'));
  const keys = Array.from({ length: 40 }, () => newId('key'));
  const models = ['gpt-4o-mini', 'claude-sonnet-4-5', 'sandbox', 'llama-3.1-8b-instruct'];
  const routes = ['/api/v1/generate', '/openai/v1/chat/completions', 'channel', 'run', '/anthropic/v1/messages'];
  const start = Date.now() - 86_400_000;
  for (let i = 0; i < ROWS; i += 500) {
    await Promise.all(Array.from({ length: 500 }, (_, j) => {
      const n = i + j;
      const at = start + n * 4;
      const failed = n % 17 === 0;
      return store.requestLogs.insert({
        id: newTimeOrderedId('log', at), at: new Date(at).toISOString(), organization_id: orgs[n % orgs.length]!, user_id: newId('usr'),
        api_key_id: n % 3 === 0 ? null : keys[n % keys.length]!, route: routes[n % routes.length]!, model: models[n % models.length]!, deployment_id: null,
        status: failed ? 'failed' : 'succeeded', error_code: failed ? 'upstream_error' : null, http_status: failed ? 502 : 200,
        prompt_tokens: 100 + (n % 900), completion_tokens: 50 + (n % 2000), cost_micros: 1234 + n, latency_ms: 800 + (n % 5000), ttft_ms: failed ? null : 120 + (n % 400),
        queued_ms: n % 3, fallback_from: n % 50 === 0 ? 'gpt-4o' : null, request_id: `req_${newId('log').slice(4, 20)}`, stream: n % 2, request_body: null, response_body: null,
      });
    }));
  }
}

describe('request log sizing', () => {
  const dirs: string[] = [];
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it(`SQLite: bytes per logged call (${ROWS} rows, indexes included)`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codeloom-logsize-'));
    dirs.push(dir);
    const handle = await openDatabase({ dataDir: dir });
    await migrateToLatest(handle);
    const size = async () => {
      await sql`pragma wal_checkpoint(TRUNCATE)`.execute(handle.db);
      const pages = await sql<{ page_count: number }>`pragma page_count`.execute(handle.db);
      const pageSize = await sql<{ page_size: number }>`pragma page_size`.execute(handle.db);
      return Number(pages.rows[0]!.page_count) * Number(pageSize.rows[0]!.page_size);
    };
    const before = await size();
    await fill(handle);
    const perRow = (await size() - before) / ROWS;
    console.log(`request log on SQLite: ${perRow.toFixed(0)} bytes per logged call (bodies off, 2 secondary indexes)`);
    await handle.close();
    expect(perRow).toBeGreaterThan(100);
    expect(perRow).toBeLessThan(MAX_BYTES_PER_ROW);
  });

  it.skipIf(!TEST_DATABASE_URL)(`PostgreSQL: bytes per logged call (${ROWS} rows, indexes and TOAST included)`, async () => {
    const schema = uniqueName('logsize');
    const handle = await openDatabase({ databaseUrl: TEST_DATABASE_URL, pgSchema: schema });
    try {
      await sql`create schema if not exists ${sql.id(schema)}`.execute(handle.db);
      await migrateToLatest(handle);
      await fill(handle);
      await sql`vacuum analyze request_logs`.execute(handle.db);
      const r = await sql<{ n: string }>`select pg_total_relation_size('request_logs') as n`.execute(handle.db);
      const perRow = Number(r.rows[0]!.n) / ROWS;
      console.log(`request log on PostgreSQL: ${perRow.toFixed(0)} bytes per logged call (bodies off, 2 secondary indexes)`);
      expect(perRow).toBeGreaterThan(100);
      expect(perRow).toBeLessThan(MAX_BYTES_PER_ROW_PG);
    } finally {
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(handle.db).catch(() => {});
      await handle.close();
    }
  });
});
