import { VerificationAttemptSchema } from './verify.js';
import { Type, type Static } from '@sinclair/typebox';
import { SingleLine, StringEnum } from './common.js';
import { GeneratedFileSchema } from './generate.js';

export const AGENT_TYPES = ['planner', 'architect', 'coder', 'reviewer', 'tester', 'documenter'] as const;
export type AgentType = (typeof AGENT_TYPES)[number];
export const AgentTypeSchema = StringEnum(AGENT_TYPES);

export const AgentConfigSchema = Type.Object({
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 32_768 })),
  specialization: Type.Optional(Type.String({ maxLength: 200, description: 'An agent type (planner, architect, coder, reviewer, tester, documenter) or free text; free text acts as a coder with that focus.' })),
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
    maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 32_768 })),
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
});
export type ExecuteBody = Static<typeof ExecuteBodySchema>;

export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const STEP_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'skipped'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const ErrorInfo = Type.Object({ code: Type.String(), message: Type.String(), step: Type.Optional(Type.Integer()) });

export const RunStepSchema = Type.Object({
  index: Type.Integer(),
  agent: AgentTypeSchema,
  model: Type.String(),
  status: StringEnum(STEP_STATUSES),
  output: Type.String(),
  tokens_used: Type.Integer(),
  started_at: Nullable(Type.String()),
  finished_at: Nullable(Type.String()),
  iteration: Type.Integer({ description: 'Which pass of the review loop this step belongs to (0 first).' }),
  verdict: Type.Optional(StringEnum(['approve', 'changes_requested'] as const)),
  files: Type.Optional(Type.Array(GeneratedFileSchema)),
  error: Type.Optional(Type.Union([ErrorInfo, Type.Null()])),
  verification: Type.Optional(VerificationAttemptSchema),
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
  result: Type.Union([Type.Object({ files: Type.Array(GeneratedFileSchema), summary: Type.String(), verification: Type.Optional(VerificationAttemptSchema) }), Type.Null()]),
  tokens_used: Type.Integer(),
  error: Type.Union([ErrorInfo, Type.Null()]),
  created_at: Type.String(),
  started_at: Nullable(Type.String()),
  finished_at: Nullable(Type.String()),
}, { $id: 'Run' });
export type Run = Static<typeof RunSchema>;
