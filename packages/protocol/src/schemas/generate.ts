import { Type, type Static } from '@sinclair/typebox';
import { SingleLine } from './common.js';
import { VerificationSchema, VerifyOptionSchema } from './verify.js';

const ContextValue = Type.Union([Type.String({ maxLength: 2_000 }), Type.Number(), Type.Boolean()]);

export const GenerationContextSchema = Type.Object(
  {
    framework: Type.Optional(Type.String({ maxLength: 100 })),
    styling: Type.Optional(Type.String({ maxLength: 100 })),
    includeTests: Type.Optional(Type.Boolean()),
    database: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: ContextValue, maxProperties: 50, description: 'Hints for the model: string, number and boolean values only.' },
);
export type GenerationContext = Static<typeof GenerationContextSchema>;

export const GenerateBodySchema = Type.Object({
  prompt: Type.String({ minLength: 1, maxLength: 32_000 }),
  language: Type.Optional(SingleLine({ minLength: 1, maxLength: 40, description: 'One of GET /api/v1/languages; inferred from the prompt when absent, else typescript.' })),
  model: Type.Optional(SingleLine({ minLength: 1, maxLength: 200, description: 'One of GET /api/v1/models; the configured default when absent.' })),
  context: Type.Optional(GenerationContextSchema),
  project_id: Type.Optional(SingleLine({ minLength: 1, maxLength: 64, description: 'Save the generated files into this project.' })),
  max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 32_768 })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  stream: Type.Optional(Type.Boolean({ description: 'true: answer text/event-stream with token, then complete or error events.' })),
  verify: Type.Optional(VerifyOptionSchema),
});
export type GenerateBody = Static<typeof GenerateBodySchema>;

export const GeneratedFileSchema = Type.Object({ path: Type.String(), content: Type.String() });
export type GeneratedFile = Static<typeof GeneratedFileSchema>;

export const GenerationResultSchema = Type.Object(
  {
    id: Type.String(),
    code: Type.String({ description: 'The main file\'s content.' }),
    language: Type.String(),
    model: Type.String(),
    tokens_used: Type.Integer(),
    processing_time: Type.Number({ description: 'Seconds, millisecond precision.' }),
    files: Type.Array(GeneratedFileSchema),
    output: Type.String({ description: 'The model\'s raw text.' }),
    usage: Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer() }),
    cost_usd: Type.Number({ description: 'What the generation\'s model calls cost in USD (repairs included), exact to the micro-dollar: each call rounded half up to the micro-dollar; 0 for a model without a price.' }),
    created_at: Type.String(),
    prompt: Type.Optional(Type.String()),
    project_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    finish_reason: Type.Optional(Type.String()),
    verification: Type.Optional(VerificationSchema),
  },
  { $id: 'GenerationResult' },
);
export type GenerationResult = Static<typeof GenerationResultSchema>;

export const ModelInfoSchema = Type.Object({
  id: Type.String(),
  provider: Type.String(),
  default: Type.Boolean(),
  description: Type.String(),
  price: Type.Optional(Type.Object({
    input: Type.Number({ description: 'USD per million prompt tokens.' }),
    output: Type.Number({ description: 'USD per million completion tokens.' }),
    cached_input: Type.Number({ description: 'USD per million cached prompt tokens, where the provider reports them.' }),
  }, { description: 'From CODELOOM_MODEL_PRICES; all 0 for a model without a price (it costs nothing).' })),
});
export type ModelInfo = Static<typeof ModelInfoSchema>;

export const LanguageInfoSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  aliases: Type.Array(Type.String()),
});
export type LanguageInfo = Static<typeof LanguageInfoSchema>;

/** Frames of the streaming channel (WebSocket) and of SSE on POST /generate. */
export type StreamEvent =
  | { event: 'connected'; data: { connection_id: string; user_id: string } }
  | { event: 'token'; id: string; data: string }
  | { event: 'complete'; id: string; data: GenerationResult | unknown }
  | { event: 'error'; id?: string; data: { status: number; code: string; message: string; [k: string]: unknown } }
  | { event: 'pong'; data?: unknown }
  | { event: string; id?: string; data?: unknown };
