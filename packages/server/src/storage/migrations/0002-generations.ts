import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('generations')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('environment', 'varchar(20)', (c) => c.notNull())
    .addColumn('project_id', 'varchar(40)')
    .addColumn('model', 'varchar(200)', (c) => c.notNull())
    .addColumn('language', 'varchar(40)', (c) => c.notNull())
    .addColumn('prompt', 'text', (c) => c.notNull())
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('output', 'text', (c) => c.notNull())
    .addColumn('files', 'text', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('prompt_tokens', 'integer', (c) => c.notNull())
    .addColumn('completion_tokens', 'integer', (c) => c.notNull())
    .addColumn('processing_ms', 'integer', (c) => c.notNull())
    .addColumn('finish_reason', 'varchar(20)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('generations_owner').on('generations').columns(['user_id', 'environment', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('generations').ifExists().execute();
}
