import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('projects')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('environment', 'varchar(20)', (c) => c.notNull())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('template', 'varchar(60)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('projects_owner').on('projects').columns(['user_id', 'environment', 'created_at']).execute();
  await db.schema.createTable('project_files')
    .addColumn('project_id', 'varchar(40)', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('path', 'varchar(500)', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('project_files_pk', ['project_id', 'path'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('project_files').ifExists().execute();
  await db.schema.dropTable('projects').ifExists().execute();
}
