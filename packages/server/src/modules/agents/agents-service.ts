import { AGENT_TYPES, type Agent, type AgentType, type CreateAgentBody, type CreateWorkflowBody, type Workflow } from '@codeloom/protocol';
import { AppError, notFound } from '../../errors.js';
import type { ModelRegistry } from '../../providers/model-registry.js';
import { newId } from '../../storage/ids.js';
import type { Store } from '../../storage/store.js';
import type { OwnedDocument } from '../../storage/repos/owned-documents-repo.js';
import type { Principal } from '../auth/principal.js';
import { paginate, type Page } from '../pagination.js';
import type { AgentData, WorkflowData } from './agent-documents.js';

const ownerOf = (p: Principal) => ({ userId: p.user.id, environment: p.environment });

/** A specialization naming an agent type makes the agent that type; free text makes a coder with that focus. */
export function agentTypeFor(specialization: string | undefined): AgentType {
  const s = specialization?.trim().toLowerCase();
  return (AGENT_TYPES as readonly string[]).includes(s ?? '') ? (s as AgentType) : 'coder';
}

export const toAgent = (d: OwnedDocument<AgentData>): Agent => ({ id: d.id, name: d.name, model: d.data.model, config: d.data.config, type: d.data.type, created_at: d.created_at });
export const toWorkflow = (d: OwnedDocument<WorkflowData>): Workflow => ({ id: d.id, name: d.name, agents: d.data.agents, config: d.data.config, created_at: d.created_at });

export class AgentsService {
  constructor(private readonly store: Store, private readonly models: ModelRegistry) {}

  private requireModel(model: string, path: string): void {
    if (!this.models.find(model)) {
      const ids = this.models.ids();
      throw new AppError('validation_failed', `Unknown model "${model}". Available models: ${ids.join(', ')}.`, { errors: [{ path, message: `must be one of: ${ids.join(', ')}` }] });
    }
  }

  private requireName(name: string): string {
    const trimmed = name.trim();
    if (!trimmed) throw new AppError('validation_failed', 'name must not be blank.', { errors: [{ path: '/name', message: 'must not be blank' }] });
    return trimmed;
  }

  async createAgent(principal: Principal, body: CreateAgentBody): Promise<Agent> {
    this.requireModel(body.model, '/model');
    const config = body.config ?? {};
    const doc = await this.store.agents.create(ownerOf(principal), newId('agt'), this.requireName(body.name), { model: body.model, type: agentTypeFor(config.specialization), config });
    return toAgent(doc);
  }

  async getAgent(principal: Principal, id: string): Promise<OwnedDocument<AgentData>> {
    const doc = await this.store.agents.get(ownerOf(principal), id);
    if (!doc) throw notFound('agent');
    return doc;
  }

  async listAgents(principal: Principal, page: number, limit: number): Promise<Page<Agent>> {
    const { rows, total } = await this.store.agents.list(ownerOf(principal), page, limit);
    return paginate(rows.map(toAgent), page, limit, total);
  }

  async deleteAgent(principal: Principal, id: string): Promise<void> {
    if (!(await this.store.agents.delete(ownerOf(principal), id))) throw notFound('agent');
  }

  async createWorkflow(principal: Principal, body: CreateWorkflowBody): Promise<Workflow> {
    const agents = body.agents.map((a, i) => {
      const model = a.model ?? this.models.default;
      this.requireModel(model, `/agents/${i}/model`);
      return { type: a.type, model };
    });
    const doc = await this.store.workflows.create(ownerOf(principal), newId('wfl'), this.requireName(body.name), { agents, config: body.config ?? {} });
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
