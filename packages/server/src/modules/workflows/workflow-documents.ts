import type { AgentType } from '@codeloom/protocol';

/** What is stored for a workflow (the row holds id, owner, name, created_at). */
export interface WorkflowData {
  agents: Array<{ type: AgentType; model: string }>;
  config: Record<string, string | number | boolean>;
}
