import type { CreateProjectBody, Project, ProjectFile, Template, UpdateProjectBody } from '@codeloom/protocol';
import { AppError, notFound } from '../../errors.js';
import type { Store } from '../../storage/store.js';
import type { Owner, ProjectRow } from '../../storage/repos/projects-repo.js';
import type { Principal } from '../../identity/principal.js';
import type { ProjectFileSink } from '../generate/generation-service.js';
import { paginate, type Page } from '../pagination.js';
import { TEMPLATES, findTemplate } from '../templates/template-catalog.js';

const ownerOf = (p: Principal): Owner => ({ userId: p.user.id, environment: p.environment });

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
    return toProject(await this.store.projects.create(ownerOf(principal), { name, description: body.description ?? '', template: body.template ?? null }, files));
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

  async saveFiles(principal: Principal, projectId: string, files: Array<{ path: string; content: string }>): Promise<void> {
    await this.require(principal, projectId);
    await this.store.projects.saveFiles(projectId, files);
  }

  private async require(principal: Principal, id: string): Promise<ProjectRow> {
    const row = await this.store.projects.get(ownerOf(principal), id);
    if (!row) throw notFound('project');
    return row;
  }
}

export type { Page };
