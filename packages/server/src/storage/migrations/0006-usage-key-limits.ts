import type { Kysely } from 'kysely';

/**
 * Usage accounting (one row per account, environment, API key, model and UTC day, added to atomically)
 * and an API key's own limits (null: the plan's).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('usage_daily')
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('environment', 'varchar(20)', (c) => c.notNull())
    // '' for calls made with a session or OAuth token (a primary key cannot hold null).
    .addColumn('api_key_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('model', 'varchar(200)', (c) => c.notNull())
    .addColumn('day', 'varchar(10)', (c) => c.notNull())
    .addColumn('requests', 'bigint', (c) => c.notNull())
    .addColumn('failed_requests', 'bigint', (c) => c.notNull())
    .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
    .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_daily_pk', ['user_id', 'environment', 'day', 'api_key_id', 'model'])
    .execute();
  await db.schema.alterTable('api_keys').addColumn('requests_per_minute', 'integer').execute();
  await db.schema.alterTable('api_keys').addColumn('tokens_per_minute', 'integer').execute();
  await db.schema.alterTable('api_keys').addColumn('monthly_tokens', 'bigint').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('usage_daily').ifExists().execute();
  for (const column of ['requests_per_minute', 'tokens_per_minute', 'monthly_tokens']) await db.schema.alterTable('api_keys').dropColumn(column).execute();
}
