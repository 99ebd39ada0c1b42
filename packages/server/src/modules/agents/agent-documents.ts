import type { AgentType } from '@codeloom/protocol';

/** What is stored for an agent and a workflow (the row holds id, owner, name, created_at). */
export interface AgentData {
  model: string;
  type: AgentType;
  config: { temperature?: number; maxTokens?: number; specialization?: string };
}

export interface WorkflowData {
  agents: Array<{ type: AgentType; model: string }>;
  config: Record<string, string | number | boolean>;
}
