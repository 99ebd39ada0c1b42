import type { Kysely } from 'kysely';

/**
 * The API key a run was started with (null: a session or OAuth token), so that each of its steps is charged to
 * that key's tokens_per_minute and monthly_tokens as well as the account's, and its usage rows name the key.
 * No foreign key: a key is revoked, never deleted, and a run outlives what it was started with.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').addColumn('api_key_id', 'varchar(40)').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('api_key_id').execute();
}
