import { Type, type Static } from '@sinclair/typebox';

/** Most inputs in one request, and most tokens (ids) in one pre-tokenized input. */
export const MAX_EMBEDDING_INPUTS = 2048;
const MAX_INPUT_TEXT = 100_000;
const MAX_INPUT_TOKENS = 32_768;

const Text = Type.String({ minLength: 1, maxLength: MAX_INPUT_TEXT });
const TokenIds = Type.Array(Type.Integer({ minimum: 0, maximum: 4_294_967_295 }), { minItems: 1, maxItems: MAX_INPUT_TOKENS });

/** POST /openai/v1/embeddings, as OpenAI's API takes it. */
export const EmbeddingsBodySchema = Type.Object({
  model: Type.String({ minLength: 1, maxLength: 200 }),
  input: Type.Union([
    Text,
    Type.Array(Text, { minItems: 1, maxItems: MAX_EMBEDDING_INPUTS }),
    TokenIds,
    Type.Array(TokenIds, { minItems: 1, maxItems: MAX_EMBEDDING_INPUTS }),
  ], { description: 'A text, texts, or pre-tokenized inputs (token ids), as OpenAI takes them; none empty.' }),
  encoding_format: Type.Optional(Type.Union([Type.Literal('float'), Type.Literal('base64')], { description: '`float` (default): arrays of numbers; `base64`: each vector as little-endian float32, base64 (what the openai SDKs ask for and decode).' })),
  dimensions: Type.Optional(Type.Integer({ minimum: 1, maximum: 16_384 })),
  user: Type.Optional(Type.String({ maxLength: 256 })),
});
export type EmbeddingsBody = Static<typeof EmbeddingsBodySchema>;

export const EmbeddingsResponseSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(Type.Object({ object: Type.Literal('embedding'), index: Type.Integer(), embedding: Type.Union([Type.Array(Type.Number()), Type.String()]) })),
  model: Type.String(),
  usage: Type.Object({ prompt_tokens: Type.Integer(), total_tokens: Type.Integer() }),
});
export type EmbeddingsResponse = Static<typeof EmbeddingsResponseSchema>;
