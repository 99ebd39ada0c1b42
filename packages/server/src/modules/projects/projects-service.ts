import type { CreateProjectBody, Project, ProjectFile, ProjectRevision, ProjectRevisionDetail, Template, UpdateProjectBody } from '@codeloom/protocol';
import { AppError, notFound } from '../../errors.js';
import type { Store } from '../../storage/store.js';
import type { Owner, ProjectRow, RevisionAuthor, RevisionRow } from '../../storage/repos/projects-repo.js';
import type { Principal } from '../../identity/principal.js';
import type { ProjectFileSink } from '../generate/generation-service.js';
import { paginate, type Page } from '../pagination.js';
import { TEMPLATES, findTemplate } from '../templates/template-catalog.js';
import { pathProblem } from './project-paths.js';
import { unifiedDiff } from './unified-diff.js';
import { zipFiles } from './zip-writer.js';

const ownerOf = (p: Principal): Owner => ({ userId: p.user.id, environment: p.environment });

const authorOf = (p: Principal): RevisionAuthor => ({ id: p.user.id, name: p.user.name });

const toRevision = (r: RevisionRow): ProjectRevision => ({
  id: r.id, number: r.number, message: r.message, author: r.author_id ? { id: r.author_id, name: r.author_name ?? '' } : null, files_changed: r.files_changed, created_at: r.created_at,
});

/** One file of a change set, as the engineer run's `result.changes` carries it (its `diff` is not needed here). */
export interface ProjectChange { path: string; status: 'added' | 'modified' | 'deleted'; content?: string }

const toProject = (r: ProjectRow): Project => ({
  id: r.id, name: r.name, description: r.description, template: r.template, files_count: r.files_count, created_at: r.created_at, updated_at: r.updated_at,
});

export class ProjectsService implements ProjectFileSink {
  constructor(private readonly store: Store) {}

  templates(): Template[] {
    return TEMPLATES.map((t) => ({ id: t.id, name: t.name, description: t.description, language: t.language, files: t.files.map((f) => f.path) }));
  }

  async create(principal: Principal, body: CreateProjectBody): Promise<Project> {
    let files: Array<{ path: string; content: string }> = [];
    if (body.template !== undefined) {
      const template = findTemplate(body.template);
      if (!template) {
        const valid = TEMPLATES.map((t) => t.id);
        throw new AppError('validation_failed', `Unknown template "${body.template}". Valid templates: ${valid.join(', ')}.`, { errors: [{ path: '/template', message: `must be one of: ${valid.join(', ')}` }] });
      }
      files = template.files;
    }
    const name = body.name.trim();
    if (!name) throw new AppError('validation_failed', 'name must not be blank.', { errors: [{ path: '/name', message: 'must not be blank' }] });
    return toProject(await this.store.projects.create(ownerOf(principal), { name, description: body.description ?? '', template: body.template ?? null }, files, authorOf(principal)));
  }

  async get(principal: Principal, id: string): Promise<Project> {
    return toProject(await this.require(principal, id));
  }

  async list(principal: Principal, page: number, limit: number): Promise<Page<Project>> {
    const { rows, total } = await this.store.projects.list(ownerOf(principal), page, limit);
    return paginate(rows.map(toProject), page, limit, total);
  }

  async update(principal: Principal, id: string, patch: UpdateProjectBody): Promise<Project> {
    if (patch.name !== undefined && !patch.name.trim()) throw new AppError('validation_failed', 'name must not be blank.', { errors: [{ path: '/name', message: 'must not be blank' }] });
    const clean = { ...(patch.name !== undefined ? { name: patch.name.trim() } : {}), ...(patch.description !== undefined ? { description: patch.description } : {}) };
    if (!(await this.store.projects.update(ownerOf(principal), id, clean))) throw notFound('project');
    return this.get(principal, id);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    if (!(await this.store.projects.delete(ownerOf(principal), id))) throw notFound('project');
  }

  async listFiles(principal: Principal, id: string, page: number, limit: number) {
    await this.require(principal, id);
    const { rows, total } = await this.store.projects.listFiles(id, page, limit);
    return paginate(rows, page, limit, total);
  }

  async getFile(principal: Principal, id: string, path: string): Promise<ProjectFile> {
    await this.require(principal, id);
    const file = await this.store.projects.getFile(id, path);
    if (!file) throw notFound('file in this project');
    return file;
  }

  async assertWritable(principal: Principal, projectId: string): Promise<void> {
    await this.require(principal, projectId);
  }

  /** Generated files saved into the project (generate and today's runs): one revision, same path replaces. */
  async saveFiles(principal: Principal, projectId: string, files: Array<{ path: string; content: string }>, message = 'Saved generated files'): Promise<void> {
    await this.require(principal, projectId);
    await this.store.projects.saveFiles(projectId, files, message, authorOf(principal));
  }

  /**
   * Applies a change set as ONE revision and returns it (CONTRACT §12.6; the engineer run saves its
   * `result.changes` with it). Paths must be relative and normalised (400 validation_failed naming
   * `/changes/{i}/path`); `added` and `modified` need `content`. Statuses are recomputed against the files as
   * they are: a change that changes nothing is left out, and when nothing is left no revision is made (null).
   */
  async saveRevision(principal: Principal, projectId: string, changes: ProjectChange[], message: string): Promise<ProjectRevision | null> {
    await this.require(principal, projectId);
    const errors: Array<{ path: string; message: string }> = [];
    changes.forEach((c, i) => {
      const problem = pathProblem(c.path);
      if (problem) errors.push({ path: `/changes/${i}/path`, message: problem });
      if (c.status !== 'deleted' && typeof c.content !== 'string') errors.push({ path: `/changes/${i}/content`, message: `is required when status is ${c.status}` });
    });
    if (errors.length) throw new AppError('validation_failed', `The change set has ${errors.length} invalid entr${errors.length === 1 ? 'y' : 'ies'}.`, { errors });
    const saved = await this.store.projects.applyRevision(projectId, changes.map((c) => ({ path: c.path, content: c.status === 'deleted' ? null : c.content! })), message, authorOf(principal));
    return saved ? toRevision(saved.revision) : null;
  }

  /** PUT …/files/{path}: one revision; writing the content a file already has makes none (the latest is returned). */
  async writeFile(principal: Principal, projectId: string, path: string, content: string): Promise<{ revision: ProjectRevision; created: boolean }> {
    await this.require(principal, projectId);
    this.checkPath(path);
    const revision = await this.saveRevision(principal, projectId, [{ path, status: 'modified', content }], `Write ${path}`);
    return revision ? { revision, created: true } : { revision: toRevision((await this.store.projects.latestRevision(projectId))!), created: false };
  }

  /** DELETE …/files/{path}: one revision; 404 when the file does not exist. */
  async deleteFile(principal: Principal, projectId: string, path: string): Promise<ProjectRevision> {
    await this.require(principal, projectId);
    this.checkPath(path);
    if (!(await this.store.projects.getFile(projectId, path))) throw notFound('file in this project');
    const revision = await this.saveRevision(principal, projectId, [{ path, status: 'deleted' }], `Delete ${path}`);
    if (!revision) throw notFound('file in this project'); // deleted by another request in between
    return revision;
  }

  async listRevisions(principal: Principal, projectId: string, page: number, limit: number): Promise<Page<ProjectRevision>> {
    await this.require(principal, projectId);
    const { rows, total } = await this.store.projects.listRevisions(projectId, page, limit);
    return paginate(rows.map(toRevision), page, limit, total);
  }

  async getRevision(principal: Principal, projectId: string, number: number): Promise<ProjectRevisionDetail> {
    await this.require(principal, projectId);
    const found = await this.store.projects.getRevision(projectId, number);
    if (!found) throw notFound('revision of this project');
    return {
      ...toRevision(found.revision),
      files: found.files.map((f) => ({ path: f.path, status: f.status, size: f.content === null ? null : Buffer.byteLength(f.content), diff: unifiedDiff(f.path, f.before, f.content) })),
    };
  }

  /** A new revision that puts every file back as it was right after revision `number` (null: nothing differs). */
  async restore(principal: Principal, projectId: string, number: number): Promise<ProjectRevision | null> {
    await this.require(principal, projectId);
    if (!(await this.store.projects.getRevision(projectId, number))) throw notFound('revision of this project');
    const then = await this.store.projects.filesAt(projectId, number);
    const now = await this.store.projects.allFiles(projectId);
    const wanted = new Set(then.map((f) => f.path));
    const changes: ProjectChange[] = [
      ...then.map((f) => ({ path: f.path, status: 'modified' as const, content: f.content })),
      ...now.filter((f) => !wanted.has(f.path)).map((f) => ({ path: f.path, status: 'deleted' as const })),
    ];
    const saved = await this.store.projects.applyRevision(projectId, changes.map((c) => ({ path: c.path, content: c.status === 'deleted' ? null : c.content! })), `Restore revision ${number}`, authorOf(principal));
    return saved ? toRevision(saved.revision) : null;
  }

  async latestRevision(principal: Principal, projectId: string): Promise<ProjectRevision> {
    await this.require(principal, projectId);
    return toRevision((await this.store.projects.latestRevision(projectId))!);
  }

  /** A zip of the files as they were right after revision `number`, or of the current files. */
  async archive(principal: Principal, projectId: string, number?: number): Promise<{ filename: string; zip: Buffer }> {
    const project = await this.require(principal, projectId);
    const base = project.name.normalize('NFKD').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '').slice(0, 60) || 'project';
    if (number === undefined) return { filename: `${base}.zip`, zip: zipFiles(await this.store.projects.allFiles(projectId)) };
    const found = await this.store.projects.getRevision(projectId, number);
    if (!found) throw notFound('revision of this project');
    return { filename: `${base}-r${number}.zip`, zip: zipFiles(await this.store.projects.filesAt(projectId, number), new Date(found.revision.created_at)) };
  }

  private checkPath(path: string): void {
    const problem = pathProblem(path);
    if (problem) throw new AppError('validation_failed', `The file path ${problem}.`, { errors: [{ path: '/path', message: problem }] });
  }

  private async require(principal: Principal, id: string): Promise<ProjectRow> {
    const row = await this.store.projects.get(ownerOf(principal), id);
    if (!row) throw notFound('project');
    return row;
  }
}

export type { Page };
