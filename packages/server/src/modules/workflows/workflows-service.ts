import type { CreateWorkflowBody, Workflow } from '@codeloom/protocol';
import { notFound } from '../../errors.js';
import type { ModelRegistry } from '../../providers/model-registry.js';
import { newId } from '../../storage/ids.js';
import type { Store } from '../../storage/store.js';
import type { OwnedDocument } from '../../storage/repos/owned-documents-repo.js';
import type { Principal } from '../../identity/principal.js';
import { checkCeilings, requireModel, requireName } from '../agents/document-checks.js';
import { paginate, type Page } from '../pagination.js';
import type { WorkflowData } from '../../storage/repos/document-data.js';

const ownerOf = (p: Principal) => ({ userId: p.user.id, environment: p.environment });

export const toWorkflow = (d: OwnedDocument<WorkflowData>): Workflow => ({ id: d.id, name: d.name, agents: d.data.agents, config: d.data.config, created_at: d.created_at });

/** Workflows: ordered teams of agents (each a type and a model). Executing one is the runs module's job. */
export class WorkflowsService {
  constructor(private readonly store: Store, private readonly models: ModelRegistry) {}

  async createWorkflow(principal: Principal, body: CreateWorkflowBody): Promise<Workflow> {
    checkCeilings(body.config, '/config');
    const agents = body.agents.map((a, i) => {
      const model = a.model ?? this.models.default;
      requireModel(this.models, model, `/agents/${i}/model`);
      return { type: a.type, model };
    });
    const doc = await this.store.workflows.create(ownerOf(principal), newId('wfl'), requireName(body.name), { agents, config: body.config ?? {} });
    return toWorkflow(doc);
  }

  async getWorkflow(principal: Principal, id: string): Promise<OwnedDocument<WorkflowData>> {
    const doc = await this.store.workflows.get(ownerOf(principal), id);
    if (!doc) throw notFound('workflow');
    return doc;
  }

  async listWorkflows(principal: Principal, page: number, limit: number): Promise<Page<Workflow>> {
    const { rows, total } = await this.store.workflows.list(ownerOf(principal), page, limit);
    return paginate(rows.map(toWorkflow), page, limit, total);
  }

  async deleteWorkflow(principal: Principal, id: string): Promise<void> {
    if (!(await this.store.workflows.delete(ownerOf(principal), id))) throw notFound('workflow');
  }
}
