import type { Environment, Run, RunLimits, RunStatus, RunStep } from '@codeloom/protocol';
import { microsToUsd } from '../../config/model-prices.js';
import type { RunsTable } from '../../storage/database.js';
import type { AgentType } from '@codeloom/protocol';
import { spentOf } from './run-ceilings.js';

/** What a run executes, frozen when it is created: deleting the workflow later does not change a run. */
export interface RunSpec {
  agents: Array<{ type: AgentType; model: string }>;
  maxIterations: number;
  temperature?: number;
  /** The output cap of each step (config `maxTokens`); a run ceiling may lower it for a step. */
  maxTokens?: number;
  /** The run ceilings (config `max_cost_usd`, `max_tokens`: the execute body's, else the agent's or workflow's); absent: none. */
  limits?: RunLimits;
  language?: string;
  /** Workflow `config.verify`: the tester and reviewer steps run the checks (modules/verify/run-checks.ts). */
  verify?: boolean;
  /** An engineer step's most model calls (config `max_steps`; default 30) and wall time (config `max_wall_seconds`). */
  maxSteps?: number;
  maxWallSeconds?: number;
}

/** A run as the executor holds it: the API shape plus its owner and spec. */
export interface RunState extends Run {
  userId: string;
  environment: Environment;
  /** The API key the run was started with: each step is charged to its windows too, and its usage rows name it. Null for a session or OAuth token. */
  apiKeyId: string | null;
  spec: RunSpec;
}

/** Runs stored before run ceilings (migration 0011) read with steps that cost 0, no limits and no wait. */
export function fromRow(row: RunsTable): RunState {
  const steps = (JSON.parse(row.steps) as RunStep[]).map((s) => ({ ...s, cost_usd: s.cost_usd ?? 0 }));
  const spec = JSON.parse(row.spec) as RunSpec;
  return {
    id: row.id, status: row.status as RunStatus, workflow_id: row.workflow_id, agent_id: row.agent_id, project_id: row.project_id,
    task: row.task, requirements: JSON.parse(row.requirements) as Run['requirements'], steps,
    result: row.result ? (JSON.parse(row.result) as Run['result']) : null, tokens_used: Number(row.tokens_used),
    cost_usd: runCostUsd(steps), limits: spec.limits ?? null, waiting: row.waiting ? (JSON.parse(row.waiting) as Run['waiting']) : null,
    error: row.error ? (JSON.parse(row.error) as Run['error']) : null, created_at: row.created_at, started_at: row.started_at,
    finished_at: row.finished_at, userId: row.user_id, environment: row.environment as Environment, apiKeyId: row.api_key_id ?? null, spec,
  };
}

/** A run's cost in USD: the sum of its steps' (added in integer micro-dollars, so it is exact). */
export const runCostUsd = (steps: readonly RunStep[]): number => microsToUsd(spentOf(steps).micros);

export function toRow(s: RunState): RunsTable {
  return {
    id: s.id, user_id: s.userId, environment: s.environment, workflow_id: s.workflow_id, agent_id: s.agent_id, project_id: s.project_id,
    status: s.status, task: s.task, requirements: JSON.stringify(s.requirements), spec: JSON.stringify(s.spec), steps: JSON.stringify(s.steps),
    result: s.result ? JSON.stringify(s.result) : null, tokens_used: s.tokens_used, error: s.error ? JSON.stringify(s.error) : null,
    created_at: s.created_at, started_at: s.started_at, finished_at: s.finished_at, api_key_id: s.apiKeyId,
    waiting: s.waiting ? JSON.stringify(s.waiting) : null,
  };
}

export function toRun(s: RunState): Run {
  const { userId: _u, environment: _e, apiKeyId: _k, spec: _s, ...run } = s;
  return run;
}

export const isFinished = (status: RunStatus) => status === 'succeeded' || status === 'failed' || status === 'cancelled';

export function newStep(index: number, agent: AgentType, model: string, iteration: number): RunStep {
  return { index, agent, model, status: 'pending', output: '', tokens_used: 0, cost_usd: 0, started_at: null, finished_at: null, iteration, error: null };
}
