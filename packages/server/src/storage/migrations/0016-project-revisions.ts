import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';

/**
 * Project history (CONTRACT §12.6, docs/api.md "Project revisions"): every change set to a project's files is a
 * revision, numbered from 1 per project. A revision keeps the content after the change of each file it touched
 * (null for a deleted file); a file's content at revision N is the one of its latest change at or before N, and
 * a revision's diffs are computed against the change before it. Projects that exist when this runs get
 * revision 1, "Initial revision", holding their current files.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('project_revisions')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('project_id', 'varchar(40)', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('author_id', 'varchar(40)')
    .addColumn('author_name', 'varchar(200)')
    .addColumn('files_changed', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addUniqueConstraint('project_revisions_number', ['project_id', 'number'])
    .execute();
  await db.schema.createTable('project_revision_files')
    .addColumn('revision_id', 'varchar(40)', (c) => c.notNull().references('project_revisions.id').onDelete('cascade'))
    .addColumn('project_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('path', 'varchar(500)', (c) => c.notNull())
    .addColumn('status', 'varchar(10)', (c) => c.notNull())
    .addColumn('content', 'text')
    .addPrimaryKeyConstraint('project_revision_files_pk', ['revision_id', 'path'])
    .execute();
  await db.schema.createIndex('project_revision_files_path').on('project_revision_files').columns(['project_id', 'path', 'number']).execute();

  // Existing projects: revision 1 holds the files they have now.
  const now = new Date().toISOString();
  const projects = await db.selectFrom('projects').select(['id']).execute();
  for (const p of projects as Array<{ id: string }>) {
    const id = `rev_${randomBytes(15).toString('base64url')}`;
    const count = await db.selectFrom('project_files').where('project_id', '=', p.id).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    await db.insertInto('project_revisions').values({ id, project_id: p.id, number: 1, message: 'Initial revision', author_id: null, author_name: null, files_changed: Number((count as { n: unknown }).n), created_at: now }).execute();
    await db.insertInto('project_revision_files').columns(['revision_id', 'project_id', 'number', 'path', 'status', 'content'])
      .expression(db.selectFrom('project_files').where('project_id', '=', p.id)
        .select((eb) => [eb.cast(eb.val(id), 'varchar(40)').as('revision_id'), 'project_id', eb.cast(eb.val(1), 'integer').as('number'), 'path', eb.cast(eb.val('added'), 'varchar(10)').as('status'), 'content']))
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('project_revision_files').ifExists().execute();
  await db.schema.dropTable('project_revisions').ifExists().execute();
}
