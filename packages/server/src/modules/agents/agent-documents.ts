import type { AgentType } from '@codeloom/protocol';

/** What is stored for an agent (the row holds id, owner, name, created_at). */
export interface AgentData {
  model: string;
  type: AgentType;
  config: { temperature?: number; maxTokens?: number; specialization?: string };
}
