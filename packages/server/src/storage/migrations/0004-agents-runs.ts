import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['agents', 'workflows']) {
    await db.schema.createTable(table)
      .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
      .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('environment', 'varchar(20)', (c) => c.notNull())
      .addColumn('name', 'varchar(200)', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
      .execute();
    await db.schema.createIndex(`${table}_owner`).on(table).columns(['user_id', 'environment', 'created_at']).execute();
  }
  await db.schema.createTable('runs')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('environment', 'varchar(20)', (c) => c.notNull())
    .addColumn('workflow_id', 'varchar(40)')
    .addColumn('agent_id', 'varchar(40)')
    .addColumn('project_id', 'varchar(40)')
    .addColumn('status', 'varchar(20)', (c) => c.notNull())
    .addColumn('task', 'text', (c) => c.notNull())
    .addColumn('requirements', 'text', (c) => c.notNull())
    .addColumn('spec', 'text', (c) => c.notNull())
    .addColumn('steps', 'text', (c) => c.notNull())
    .addColumn('result', 'text')
    .addColumn('tokens_used', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('started_at', 'varchar(40)')
    .addColumn('finished_at', 'varchar(40)')
    .execute();
  await db.schema.createIndex('runs_owner').on('runs').columns(['user_id', 'environment', 'created_at']).execute();
  await db.schema.createIndex('runs_status').on('runs').column('status').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['runs', 'workflows', 'agents']) await db.schema.dropTable(t).ifExists().execute();
}
