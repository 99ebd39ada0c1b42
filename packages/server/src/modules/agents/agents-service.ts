import { AGENT_TYPES, type Agent, type AgentType, type CreateAgentBody } from '@codeloom/protocol';
import { notFound } from '../../errors.js';
import type { ModelRegistry } from '../../providers/model-registry.js';
import { newId } from '../../storage/ids.js';
import type { Store } from '../../storage/store.js';
import type { OwnedDocument } from '../../storage/repos/owned-documents-repo.js';
import type { Principal } from '../../identity/principal.js';
import { paginate, type Page } from '../pagination.js';
import type { AgentData } from '../../storage/repos/document-data.js';
import { checkCeilings, requireModel, requireName } from './document-checks.js';

const ownerOf = (p: Principal) => ({ userId: p.user.id, environment: p.environment });

/** A specialization naming an agent type makes the agent that type; free text makes a coder with that focus. */
export function agentTypeFor(specialization: string | undefined): AgentType {
  const s = specialization?.trim().toLowerCase();
  return (AGENT_TYPES as readonly string[]).includes(s ?? '') ? (s as AgentType) : 'coder';
}

export const toAgent = (d: OwnedDocument<AgentData>): Agent => ({ id: d.id, name: d.name, model: d.data.model, config: d.data.config, type: d.data.type, created_at: d.created_at });

export class AgentsService {
  constructor(private readonly store: Store, private readonly models: ModelRegistry) {}

  async createAgent(principal: Principal, body: CreateAgentBody): Promise<Agent> {
    requireModel(this.models, body.model, '/model');
    const config = body.config ?? {};
    checkCeilings(config, '/config');
    const doc = await this.store.agents.create(ownerOf(principal), newId('agt'), requireName(body.name), { model: body.model, type: agentTypeFor(config.specialization), config });
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
}
