import type { Kysely } from 'kysely';
import type { Environment } from '@codeloom/protocol';
import type { Database, ProjectRevisionsTable, ProjectsTable } from '../database.js';
import { newId, nowIso } from '../ids.js';

export interface Owner { userId: string; environment: Environment }
export interface ProjectRow extends ProjectsTable { files_count: number }
export interface RevisionAuthor { id: string; name: string }
/** One file of a change set: its new content, or null to delete it. */
export interface FileChange { path: string; content: string | null }
export interface RevisionFileRow { path: string; status: 'added' | 'modified' | 'deleted'; content: string | null }
export type RevisionRow = ProjectRevisionsTable;

const toRevision = (r: ProjectRevisionsTable): RevisionRow => ({ ...r, number: Number(r.number), files_changed: Number(r.files_changed) });

/** Every query is scoped by owner and environment: another account's project does not exist here. */
export class ProjectsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  private owned(owner: Owner) {
    return this.db.selectFrom('projects').where('projects.user_id', '=', owner.userId).where('projects.environment', '=', owner.environment);
  }

  private withCount(owner: Owner) {
    return this.owned(owner).selectAll('projects').select((eb) =>
      eb.selectFrom('project_files').whereRef('project_files.project_id', '=', 'projects.id').select((e) => e.fn.countAll<number>().as('n')).as('files_count'));
  }

  /** The project starts at revision 1, holding its first files (none for an empty project). */
  async create(owner: Owner, input: { name: string; description: string; template: string | null }, files: Array<{ path: string; content: string }>, author: RevisionAuthor | null = null): Promise<ProjectRow> {
    const now = nowIso();
    const row: ProjectsTable = { id: newId('prj'), user_id: owner.userId, environment: owner.environment, name: input.name, description: input.description, template: input.template, created_at: now, updated_at: now };
    const revisionId = newId('rev');
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto('projects').values(row).execute();
      await tx.insertInto('project_revisions').values({
        id: revisionId, project_id: row.id, number: 1, message: input.template ? `Created from template ${input.template}` : 'Created',
        author_id: author?.id ?? null, author_name: author?.name ?? null, files_changed: files.length, created_at: now,
      }).execute();
      if (files.length) {
        await tx.insertInto('project_files').values(files.map((f) => ({ project_id: row.id, path: f.path, content: f.content, size: Buffer.byteLength(f.content), updated_at: now }))).execute();
        await tx.insertInto('project_revision_files').values(files.map((f) => ({ revision_id: revisionId, project_id: row.id, number: 1, path: f.path, status: 'added', content: f.content }))).execute();
      }
    });
    return { ...row, files_count: files.length };
  }

  async get(owner: Owner, id: string): Promise<ProjectRow | undefined> {
    const row = await this.withCount(owner).where('projects.id', '=', id).executeTakeFirst();
    return row && { ...row, files_count: Number(row.files_count ?? 0) };
  }

  async list(owner: Owner, page: number, limit: number): Promise<{ rows: ProjectRow[]; total: number }> {
    const [rows, count] = await Promise.all([
      this.withCount(owner).orderBy('projects.created_at', 'desc').orderBy('projects.id', 'desc').limit(limit).offset((page - 1) * limit).execute(),
      this.owned(owner).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows.map((r) => ({ ...r, files_count: Number(r.files_count ?? 0) })), total: Number(count.n) };
  }

  async update(owner: Owner, id: string, patch: { name?: string; description?: string }): Promise<boolean> {
    const res = await this.db.updateTable('projects').set({ ...patch, updated_at: nowIso() })
      .where('id', '=', id).where('user_id', '=', owner.userId).where('environment', '=', owner.environment).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async delete(owner: Owner, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const project = await tx.selectFrom('projects').select('id').where('id', '=', id).where('user_id', '=', owner.userId).where('environment', '=', owner.environment).executeTakeFirst();
      if (!project) return false;
      await tx.deleteFrom('project_files').where('project_id', '=', id).execute();
      await tx.deleteFrom('project_revision_files').where('project_id', '=', id).execute();
      await tx.deleteFrom('project_revisions').where('project_id', '=', id).execute();
      await tx.deleteFrom('projects').where('id', '=', id).execute();
      return true;
    });
  }

  /**
   * Applies a change set as one revision, in one transaction: files whose content is unchanged, and deletions of
   * files that do not exist, are left out; when nothing is left no revision is made (undefined). The caller has
   * checked ownership. The project row is updated first, which on PostgreSQL locks it until the commit, so two
   * change sets to one project are numbered one after the other (SQLite runs one write transaction at a time).
   */
  async applyRevision(projectId: string, changes: FileChange[], message: string, author: RevisionAuthor | null): Promise<{ revision: RevisionRow; files: RevisionFileRow[] } | undefined> {
    const byPath = new Map<string, FileChange>();
    for (const c of changes) byPath.set(c.path, c); // the last change of a path wins
    if (!byPath.size) return undefined;
    const now = nowIso();
    return this.db.transaction().execute(async (tx) => {
      await tx.updateTable('projects').set({ updated_at: now }).where('id', '=', projectId).execute();
      const current = new Map<string, string>();
      const paths = [...byPath.keys()];
      for (let i = 0; i < paths.length; i += 500) {
        const rows = await tx.selectFrom('project_files').select(['path', 'content']).where('project_id', '=', projectId).where('path', 'in', paths.slice(i, i + 500)).execute();
        for (const r of rows) current.set(r.path, r.content);
      }
      const files: RevisionFileRow[] = [];
      for (const [path, c] of [...byPath].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        const before = current.get(path);
        if (c.content === null) { if (before !== undefined) files.push({ path, status: 'deleted', content: null }); }
        else if (before === undefined) files.push({ path, status: 'added', content: c.content });
        else if (before !== c.content) files.push({ path, status: 'modified', content: c.content });
      }
      if (!files.length) return undefined;
      const last = await tx.selectFrom('project_revisions').where('project_id', '=', projectId).select((eb) => eb.fn.max('number').as('n')).executeTakeFirst();
      const revision: RevisionRow = {
        id: newId('rev'), project_id: projectId, number: Number(last?.n ?? 0) + 1, message, author_id: author?.id ?? null, author_name: author?.name ?? null,
        files_changed: files.length, created_at: now,
      };
      await tx.insertInto('project_revisions').values(revision).execute();
      for (let i = 0; i < files.length; i += 200) {
        await tx.insertInto('project_revision_files').values(files.slice(i, i + 200).map((f) => ({ revision_id: revision.id, project_id: projectId, number: revision.number, path: f.path, status: f.status, content: f.content }))).execute();
      }
      for (const f of files) {
        if (f.content === null) {
          await tx.deleteFrom('project_files').where('project_id', '=', projectId).where('path', '=', f.path).execute();
        } else {
          await tx.insertInto('project_files').values({ project_id: projectId, path: f.path, content: f.content, size: Buffer.byteLength(f.content), updated_at: now })
            .onConflict((oc) => oc.columns(['project_id', 'path']).doUpdateSet({ content: f.content!, size: Buffer.byteLength(f.content!), updated_at: now })).execute();
        }
      }
      return { revision, files };
    });
  }

  /** Same path replaces the old content (one revision). The caller has checked ownership. */
  async saveFiles(projectId: string, files: Array<{ path: string; content: string }>, message = 'Saved files', author: RevisionAuthor | null = null): Promise<void> {
    await this.applyRevision(projectId, files.map((f) => ({ path: f.path, content: f.content })), message, author);
  }

  async listRevisions(projectId: string, page: number, limit: number): Promise<{ rows: RevisionRow[]; total: number }> {
    const base = this.db.selectFrom('project_revisions').where('project_id', '=', projectId);
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('number', 'desc').limit(limit).offset((page - 1) * limit).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows.map(toRevision), total: Number(count.n) };
  }

  async latestRevision(projectId: string): Promise<RevisionRow | undefined> {
    const row = await this.db.selectFrom('project_revisions').selectAll().where('project_id', '=', projectId).orderBy('number', 'desc').limit(1).executeTakeFirst();
    return row && toRevision(row);
  }

  /** A revision with the files it changed, and each one's content just before it (null when it did not exist). */
  async getRevision(projectId: string, number: number): Promise<{ revision: RevisionRow; files: Array<RevisionFileRow & { before: string | null }> } | undefined> {
    const row = await this.db.selectFrom('project_revisions').selectAll().where('project_id', '=', projectId).where('number', '=', number).executeTakeFirst();
    if (!row) return undefined;
    const files = await this.db.selectFrom('project_revision_files').select(['path', 'status', 'content']).where('revision_id', '=', row.id).orderBy('path').execute();
    const before = new Map<string, string | null>();
    const paths = files.map((f) => f.path);
    for (let i = 0; i < paths.length; i += 500) {
      const earlier = await this.db.selectFrom('project_revision_files').select(['path', 'content', 'number'])
        .where('project_id', '=', projectId).where('path', 'in', paths.slice(i, i + 500)).where('number', '<', number).orderBy('number', 'desc').execute();
      for (const e of earlier) if (!before.has(e.path)) before.set(e.path, e.content);
    }
    return {
      revision: toRevision(row),
      files: files.map((f) => ({ path: f.path, status: f.status as RevisionFileRow['status'], content: f.content, before: before.get(f.path) ?? null })),
    };
  }

  /** The project's files as they were right after revision `number`, by path. */
  async filesAt(projectId: string, number: number): Promise<Array<{ path: string; content: string }>> {
    const rows = await this.db.selectFrom('project_revision_files').select(['path', 'content', 'number'])
      .where('project_id', '=', projectId).where('number', '<=', number).orderBy('path').orderBy('number', 'desc').execute();
    const out: Array<{ path: string; content: string }> = [];
    let last: string | undefined;
    for (const r of rows) {
      if (r.path === last) continue;
      last = r.path;
      if (r.content !== null) out.push({ path: r.path, content: r.content });
    }
    return out;
  }

  /** Every current file with its content, by path (for a download). */
  async allFiles(projectId: string): Promise<Array<{ path: string; content: string }>> {
    return this.db.selectFrom('project_files').select(['path', 'content']).where('project_id', '=', projectId).orderBy('path').execute();
  }

  async listFiles(projectId: string, page: number, limit: number): Promise<{ rows: Array<{ path: string; size: number; updated_at: string }>; total: number }> {
    const base = this.db.selectFrom('project_files').where('project_id', '=', projectId);
    const [rows, count] = await Promise.all([
      base.select(['path', 'size', 'updated_at']).orderBy('path').limit(limit).offset((page - 1) * limit).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows.map((r) => ({ ...r, size: Number(r.size) })), total: Number(count.n) };
  }

  async getFile(projectId: string, path: string) {
    const row = await this.db.selectFrom('project_files').select(['path', 'content', 'size', 'updated_at']).where('project_id', '=', projectId).where('path', '=', path).executeTakeFirst();
    return row && { ...row, size: Number(row.size) };
  }
}
