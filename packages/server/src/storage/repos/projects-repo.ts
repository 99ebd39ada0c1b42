import type { Kysely } from 'kysely';
import type { Environment } from '@codeloom/protocol';
import type { Database, ProjectsTable } from '../database.js';
import { newId, nowIso } from '../ids.js';

export interface Owner { userId: string; environment: Environment }
export interface ProjectRow extends ProjectsTable { files_count: number }

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

  async create(owner: Owner, input: { name: string; description: string; template: string | null }, files: Array<{ path: string; content: string }>): Promise<ProjectRow> {
    const now = nowIso();
    const row: ProjectsTable = { id: newId('prj'), user_id: owner.userId, environment: owner.environment, name: input.name, description: input.description, template: input.template, created_at: now, updated_at: now };
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto('projects').values(row).execute();
      if (files.length) {
        await tx.insertInto('project_files').values(files.map((f) => ({ project_id: row.id, path: f.path, content: f.content, size: Buffer.byteLength(f.content), updated_at: now }))).execute();
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
      await tx.deleteFrom('projects').where('id', '=', id).execute();
      return true;
    });
  }

  /** Same path replaces the old content. The caller has checked ownership. */
  async saveFiles(projectId: string, files: Array<{ path: string; content: string }>): Promise<void> {
    if (!files.length) return;
    const now = nowIso();
    await this.db.transaction().execute(async (tx) => {
      for (const f of files) {
        await tx.insertInto('project_files').values({ project_id: projectId, path: f.path, content: f.content, size: Buffer.byteLength(f.content), updated_at: now })
          .onConflict((oc) => oc.columns(['project_id', 'path']).doUpdateSet({ content: f.content, size: Buffer.byteLength(f.content), updated_at: now })).execute();
      }
      await tx.updateTable('projects').set({ updated_at: now }).where('id', '=', projectId).execute();
    });
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
