import { VerificationAttemptSchema } from './verify.js';
import { Type, type Static } from '@sinclair/typebox';
import { SingleLine, StringEnum } from './common.js';
import { GeneratedFileSchema } from './generate.js';

export const AGENT_TYPES = ['planner', 'architect', 'coder', 'reviewer', 'tester', 'documenter', 'engineer'] as const;
export type AgentType = (typeof AGENT_TYPES)[number];
export const AgentTypeSchema = StringEnum(AGENT_TYPES);

/** Highest `max_cost_usd` a run may be given (USD). */
export const MAX_RUN_COST_USD = 100_000;
/** Highest `max_tokens` a run may be given (its whole run, every step's prompt and answer). */
export const MAX_RUN_TOKENS = 100_000_000;

const PerCallMaxTokens = () => Type.Integer({ minimum: 1, maximum: 32_768, description: 'Output cap of each model call (each step\'s answer), in tokens. Not the run ceiling `max_tokens` (snake case), which bounds the whole run.' });
/** The run ceilings (CONTRACT §12.2, docs/agents.md "Run ceilings"), the same on agents, workflows and execute bodies. */
/** Most steps (model calls) an engineer run may be given. */
export const MAX_ENGINEER_STEPS = 200;
/** The engineer's own settings (docs/agents.md "The engineer"), on agents and workflows. */
const EngineerFields = () => ({
  max_steps: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_ENGINEER_STEPS, description: `The engineer's most steps (model calls) in one run, 1–${MAX_ENGINEER_STEPS} (default 30); past it the run ends \`failed\` with \`max_steps_reached\`.` })),
  max_wall_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400, description: 'The engineer step\'s wall time in seconds (default 1800); past it the run ends `failed` with `run_timeout`.' })),
});
const RunCeilingFields = () => ({
  max_cost_usd: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: MAX_RUN_COST_USD, description: `Ceiling on what the whole run may cost, in USD (> 0, at most ${MAX_RUN_COST_USD}, at most six decimals), at the models' prices. Each step's output cap is lowered so the step can never cross it; when nothing is left the run ends \`failed\` with code \`budget_exceeded\`. Unpriced models cost 0.` })),
  max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_RUN_TOKENS, description: `Ceiling on the tokens of the whole run (every step's prompt and answer), 1–${MAX_RUN_TOKENS}. Each step's output cap is lowered so the step can never cross it; when nothing is left the run ends \`failed\` with code \`budget_exceeded\`. Not \`maxTokens\` (camel case), the output cap of each step.` })),
});

export const AgentConfigSchema = Type.Object({
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  maxTokens: Type.Optional(PerCallMaxTokens()),
  ...RunCeilingFields(),
  ...EngineerFields(),
  specialization: Type.Optional(Type.String({ maxLength: 200, description: 'An agent type (planner, architect, coder, reviewer, tester, documenter, engineer) or free text; free text acts as a coder with that focus.' })),
});

export const CreateAgentBodySchema = Type.Object({
  name: SingleLine({ minLength: 1, maxLength: 100 }),
  model: SingleLine({ minLength: 1, maxLength: 200 }),
  config: Type.Optional(AgentConfigSchema),
});
export type CreateAgentBody = Static<typeof CreateAgentBodySchema>;

export const AgentSchema = Type.Object({
  id: Type.String(), name: Type.String(), model: Type.String(),
  config: AgentConfigSchema, type: AgentTypeSchema, created_at: Type.String(),
}, { $id: 'Agent' });
export type Agent = Static<typeof AgentSchema>;

export const MAX_WORKFLOW_AGENTS = 12;

export const WorkflowConfigSchema = Type.Object(
  {
    max_iterations: Type.Optional(Type.Integer({ minimum: 0, maximum: 5, description: 'How often a reviewer may send work back to the coder (default 2).' })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    maxTokens: Type.Optional(PerCallMaxTokens()),
    ...RunCeilingFields(),
    ...EngineerFields(),
  },
  { additionalProperties: Type.Union([Type.String({ maxLength: 2_000 }), Type.Number(), Type.Boolean()]), maxProperties: 30 },
);

export const CreateWorkflowBodySchema = Type.Object({
  name: SingleLine({ minLength: 1, maxLength: 100 }),
  agents: Type.Array(Type.Object({ type: AgentTypeSchema, model: Type.Optional(SingleLine({ minLength: 1, maxLength: 200 })) }), { minItems: 1, maxItems: MAX_WORKFLOW_AGENTS }),
  config: Type.Optional(WorkflowConfigSchema),
});
export type CreateWorkflowBody = Static<typeof CreateWorkflowBodySchema>;

export const WorkflowSchema = Type.Object({
  id: Type.String(), name: Type.String(),
  agents: Type.Array(Type.Object({ type: AgentTypeSchema, model: Type.String() })),
  config: WorkflowConfigSchema, created_at: Type.String(),
}, { $id: 'Workflow' });
export type Workflow = Static<typeof WorkflowSchema>;

export const ExecuteBodySchema = Type.Object({
  task: Type.String({ minLength: 1, maxLength: 16_000 }),
  requirements: Type.Optional(Type.Object(
    { database: Type.Optional(Type.String({ maxLength: 200 })), framework: Type.Optional(Type.String({ maxLength: 200 })), authentication: Type.Optional(Type.String({ maxLength: 200 })) },
    { additionalProperties: Type.Union([Type.String({ maxLength: 2_000 }), Type.Number(), Type.Boolean()]), maxProperties: 30 },
  )),
  project_id: Type.Optional(SingleLine({ minLength: 1, maxLength: 64 })),
  language: Type.Optional(SingleLine({ minLength: 1, maxLength: 40 })),
  config: Type.Optional(Type.Object(RunCeilingFields(), { additionalProperties: false, description: 'Run ceilings for this run; each one given replaces the agent\'s or workflow\'s own.' })),
});
export type ExecuteBody = Static<typeof ExecuteBodySchema>;

export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const STEP_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'skipped'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const ErrorInfo = Type.Object({ code: Type.String(), message: Type.String(), step: Type.Optional(Type.Integer()) });

export const RUN_WAIT_CODES = ['rate_limited', 'budget_exceeded'] as const;
export const RunWaitingSchema = Type.Object({
  code: StringEnum(RUN_WAIT_CODES, { description: 'Why the run waits: a tokens-per-minute window (`rate_limited`) or a budget (`budget_exceeded`) refused its next step for now.' }),
  message: Type.String(),
  until: Type.String({ format: 'date-time', description: 'When the run tries the step again (RFC 3339).' }),
}, { description: 'Set while the run waits before its next step; null otherwise.' });
export type RunWaiting = Static<typeof RunWaitingSchema>;

export const RunLimitsSchema = Type.Object({
  max_cost_usd: Type.Union([Type.Number(), Type.Null()]),
  max_tokens: Type.Union([Type.Integer(), Type.Null()]),
}, { description: 'The run ceilings that apply (the execute body\'s, else the agent\'s or workflow\'s); null when it has none.' });
export type RunLimits = Static<typeof RunLimitsSchema>;

export const RunFileChangeSchema = Type.Object({
  path: Type.String(),
  status: StringEnum(['added', 'modified', 'deleted'] as const),
  diff: Type.String({ description: 'A unified diff (--- a/path, +++ b/path, @@ hunks; /dev/null for an added or deleted file).' }),
});
export type RunFileChange = Static<typeof RunFileChangeSchema>;

export const RunStepSchema = Type.Object({
  index: Type.Integer(),
  agent: AgentTypeSchema,
  model: Type.String(),
  status: StringEnum(STEP_STATUSES),
  output: Type.String(),
  tokens_used: Type.Integer(),
  cost_usd: Type.Number({ description: 'What this step\'s model call cost, in USD (0 for an unpriced model).' }),
  started_at: Nullable(Type.String()),
  finished_at: Nullable(Type.String()),
  iteration: Type.Integer({ description: 'Which pass of the review loop this step belongs to (0 first).' }),
  verdict: Type.Optional(StringEnum(['approve', 'changes_requested'] as const)),
  files: Type.Optional(Type.Array(GeneratedFileSchema)),
  error: Type.Optional(Type.Union([ErrorInfo, Type.Null()])),
  verification: Type.Optional(VerificationAttemptSchema),
  changes: Type.Optional(Type.Array(RunFileChangeSchema, { description: 'An engineer step: what it changed in the workspace.' })),
});
export type RunStep = Static<typeof RunStepSchema>;

export const RunSchema = Type.Object({
  id: Type.String(),
  status: StringEnum(RUN_STATUSES),
  workflow_id: Nullable(Type.String()),
  agent_id: Nullable(Type.String()),
  project_id: Nullable(Type.String()),
  task: Type.String(),
  requirements: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
  steps: Type.Array(RunStepSchema),
  result: Type.Union([Type.Object({
    files: Type.Array(GeneratedFileSchema), summary: Type.String(), verification: Type.Optional(VerificationAttemptSchema),
    changes: Type.Optional(Type.Array(RunFileChangeSchema, { description: 'An engineer run\'s changes to its workspace (the project\'s files, or empty), path order, each with a unified diff.' })),
  }), Type.Null()]),
  tokens_used: Type.Integer(),
  cost_usd: Type.Number({ description: 'What the run has cost so far, in USD: the sum of its steps\' costs.' }),
  limits: Type.Union([RunLimitsSchema, Type.Null()]),
  waiting: Type.Union([RunWaitingSchema, Type.Null()]),
  error: Type.Union([ErrorInfo, Type.Null()]),
  created_at: Type.String(),
  started_at: Nullable(Type.String()),
  finished_at: Nullable(Type.String()),
}, { $id: 'Run' });
export type Run = Static<typeof RunSchema>;
