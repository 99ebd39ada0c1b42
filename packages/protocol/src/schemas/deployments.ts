import { Type, type Static } from '@sinclair/typebox';
import { SingleLine, StringEnum, Timestamp } from './common.js';

/** Model deployments (CONTRACT §12.4): administrators add model back-ends at run time. */
export const DEPLOYMENT_PROVIDERS = ['openai', 'anthropic'] as const;
export const DEPLOYMENT_HEALTH_STATUSES = ['ok', 'cooling_down', 'disabled'] as const;

const Price = Type.Number({ minimum: 0, maximum: 100_000, description: 'US dollars per million tokens.' });
export const DeploymentPriceSchema = Type.Object({
  input: Price,
  output: Price,
  cached_input: Type.Optional(Price),
}, { additionalProperties: false });

export const DeploymentModelSchema = Type.Object({
  id: SingleLine({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$', description: 'The model id callers use.' }),
  upstream_model: Type.Optional(SingleLine({ minLength: 1, maxLength: 200, description: 'What the back-end calls it (default: `id`).' })),
  fim: Type.Optional(Type.Boolean({ description: 'Takes fill-in-the-middle (`suffix`); OpenAI-compatible back-ends only.' })),
  embeddings: Type.Optional(Type.Boolean({ description: 'An embedding model (POST /openai/v1/embeddings); OpenAI-compatible back-ends only.' })),
  context_window: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000 })),
  max_output_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Output cap when a request names no max_tokens (default CODELOOM_MAX_OUTPUT_TOKENS).' })),
  price: DeploymentPriceSchema,
}, { additionalProperties: false });
export type DeploymentModel = Static<typeof DeploymentModelSchema>;

const BaseUrl = SingleLine({ minLength: 8, maxLength: 2000, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+', description: 'http(s) URL of the back-end, e.g. http://127.0.0.1:11434/v1 (Ollama) or https://api.anthropic.com/v1.' });
const Weight = Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Share of the model\'s calls under weighted routing (default 1; 0 takes none).' });
const PerMinute = (what: string) => Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), Type.Null()], { description: `Upstream ${what} per minute, across every instance (null: no limit).` });

export const CreateDeploymentBodySchema = Type.Object({
  name: SingleLine({ minLength: 1, maxLength: 200 }),
  provider: StringEnum(DEPLOYMENT_PROVIDERS, { description: '`openai` for any OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp\'s server), `anthropic` for the Messages API.' }),
  base_url: BaseUrl,
  api_key: Type.Optional(Type.String({ maxLength: 4000, description: 'Stored encrypted (CODELOOM_SECRET_KEY); never returned.' })),
  models: Type.Array(DeploymentModelSchema, { minItems: 1, maxItems: 200 }),
  weight: Type.Optional(Weight),
  rpm: Type.Optional(PerMinute('requests')),
  tpm: Type.Optional(PerMinute('tokens')),
  enabled: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });
export type CreateDeploymentBody = Static<typeof CreateDeploymentBodySchema>;

export const UpdateDeploymentBodySchema = Type.Partial(CreateDeploymentBodySchema, { additionalProperties: false, minProperties: 1 });
export type UpdateDeploymentBody = Static<typeof UpdateDeploymentBodySchema>;

export const DeploymentHealthSchema = Type.Object({
  status: StringEnum(DEPLOYMENT_HEALTH_STATUSES),
  consecutive_failures: Type.Integer(),
  cooldown_until: Type.Union([Timestamp(), Type.Null()]),
  latency_ms: Type.Union([Type.Integer(), Type.Null()], { description: 'Recent latency of its successful calls on this instance.' }),
});

export const DeploymentSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  provider: StringEnum(DEPLOYMENT_PROVIDERS),
  base_url: Type.String(),
  has_api_key: Type.Boolean(),
  models: Type.Array(DeploymentModelSchema),
  weight: Type.Integer(),
  rpm: Type.Union([Type.Integer(), Type.Null()]),
  tpm: Type.Union([Type.Integer(), Type.Null()]),
  enabled: Type.Boolean(),
  read_only: Type.Boolean({ description: 'Configured by environment variables (ids `env-…`): shown, not changed through the API.' }),
  health: DeploymentHealthSchema,
  created_at: Type.Union([Timestamp(), Type.Null()]),
  updated_at: Type.Union([Timestamp(), Type.Null()]),
});
export type Deployment = Static<typeof DeploymentSchema>;

export const DeploymentListSchema = Type.Object({ data: Type.Array(DeploymentSchema) });

export const DeploymentTestResultSchema = Type.Object({
  ok: Type.Boolean(),
  model: Type.String({ description: 'The model the test called (the deployment\'s first).' }),
  latency_ms: Type.Integer(),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
});
export type DeploymentTestResult = Static<typeof DeploymentTestResultSchema>;
