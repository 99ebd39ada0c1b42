import type { AgentType } from '@codeloom/protocol';

/** The JSON documents kept in the agents and workflows tables (the row holds id, owner, name, created_at). */

/** What is stored for an agent. */
export interface AgentData {
  model: string;
  type: AgentType;
  config: { temperature?: number; maxTokens?: number; specialization?: string };
}

/** What is stored for a workflow. */
export interface WorkflowData {
  agents: Array<{ type: AgentType; model: string }>;
  config: Record<string, string | number | boolean>;
}
