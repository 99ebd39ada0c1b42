import type { Kysely } from 'kysely';

/**
 * Stored Responses API answers (POST /openai/v1/responses with `store`, docs/openai.md): the `response`
 * object as it was answered, and the conversation it ends (the input items it continued, its own input and
 * output, in the internal conversation form; its `instructions` are not carried over), for GET, DELETE and
 * `previous_response_id`. Scoped to an organization (and its environment); `user_id` is the account that made
 * it. Kept until deleted or `expires_at` (30 days after creation), whichever comes first; an hourly job deletes
 * expired rows.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('responses')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('org_id', 'varchar(40)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('environment', 'varchar(20)', (c) => c.notNull())
    .addColumn('response', 'text', (c) => c.notNull())
    .addColumn('conversation', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('responses_expiry').on('responses').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('responses').ifExists().execute();
}
