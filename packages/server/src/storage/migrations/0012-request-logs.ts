import type { Kysely } from 'kysely';

/**
 * The request log (CONTRACT §12.7): one row per model call, written through the group commit with the call's
 * usage row. Built for retention: the id is time-ordered (`log_` + creation time + random), so the primary key
 * is also the time order — listing newest first, the `from`/`to` bounds and the retention job's deletions
 * (`id < log_<cutoff>`, in bounded batches) all walk an index in time order, and inserts land on the last page.
 * Two secondary indexes only (each one is paid on every insert, the hot path): the organization's calls in
 * time order, and an API key's; the other filters (model, status, route) narrow the organization's rows as
 * the index walks them newest first.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('request_logs')
    .addColumn('id', 'varchar(48)', (c) => c.primaryKey())
    .addColumn('at', 'varchar(40)', (c) => c.notNull())
    .addColumn('organization_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('api_key_id', 'varchar(40)')
    .addColumn('route', 'varchar(120)', (c) => c.notNull())
    .addColumn('model', 'varchar(200)', (c) => c.notNull())
    .addColumn('deployment_id', 'varchar(80)')
    .addColumn('status', 'varchar(20)', (c) => c.notNull())
    .addColumn('error_code', 'varchar(60)')
    .addColumn('http_status', 'integer', (c) => c.notNull())
    .addColumn('prompt_tokens', 'integer', (c) => c.notNull())
    .addColumn('completion_tokens', 'integer', (c) => c.notNull())
    .addColumn('cost_micros', 'bigint', (c) => c.notNull())
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('ttft_ms', 'integer')
    .addColumn('queued_ms', 'integer', (c) => c.notNull())
    .addColumn('fallback_from', 'varchar(200)')
    .addColumn('request_id', 'varchar(130)')
    .addColumn('stream', 'integer', (c) => c.notNull())
    .addColumn('request_body', 'text')
    .addColumn('response_body', 'text')
    .execute();
  await db.schema.createIndex('request_logs_org').on('request_logs').columns(['organization_id', 'id']).execute();
  await db.schema.createIndex('request_logs_org_key').on('request_logs').columns(['organization_id', 'api_key_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('request_logs').ifExists().execute();
}
