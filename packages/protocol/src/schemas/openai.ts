/**
 * The OpenAI-compatible surface under /openai/v1 (docs/openai.md): request bodies as OpenAI's SDKs and
 * editors send them. Fields a client may send that Codeloom does not act on (presence_penalty, seed, …)
 * are accepted and ignored, as OpenAI-compatible servers do; fields it cannot honour are a 400.
 */
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './common.js';

const Nullable = <T extends ReturnType<typeof Type.Integer> | ReturnType<typeof Type.Number> | ReturnType<typeof Type.Boolean> | ReturnType<typeof Type.String>>(t: T) => Type.Optional(Type.Union([t, Type.Null()]));

const TextPart = Type.Object({ type: Type.Literal('text'), text: Type.String({ maxLength: 1_000_000 }) });

export const OpenAIMessageSchema = Type.Object({
  role: StringEnum(['system', 'developer', 'user', 'assistant'] as const),
  content: Type.Union([Type.String({ maxLength: 1_000_000 }), Type.Array(TextPart, { maxItems: 1000 }), Type.Null()], { errorMessage: 'must be a string or an array of text parts ({"type":"text","text":…})' }),
  name: Type.Optional(Type.String({ maxLength: 256 })),
});

const Stop = Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 4 }), Type.Null()], { errorMessage: 'must be a string or up to 4 strings' }));

const Common = {
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A model id of GET /openai/v1/models; default: the server\'s default model.' })),
  max_tokens: Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  temperature: Nullable(Type.Number({ minimum: 0, maximum: 2 })),
  top_p: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
  stop: Stop,
  stream: Nullable(Type.Boolean()),
  stream_options: Type.Optional(Type.Union([Type.Object({ include_usage: Type.Optional(Type.Boolean()) }), Type.Null()])),
  user: Type.Optional(Type.String({ maxLength: 256 })),
  n: Nullable(Type.Integer({ minimum: 1, maximum: 1, errorMessage: 'must be 1 (one choice per request)' })),
};

export const ChatCompletionBodySchema = Type.Object({
  ...Common,
  messages: Type.Array(OpenAIMessageSchema, { minItems: 1, maxItems: 1000 }),
  max_completion_tokens: Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
});
export type ChatCompletionBody = Static<typeof ChatCompletionBodySchema>;

export const CompletionBodySchema = Type.Object({
  ...Common,
  prompt: Type.Union([Type.String({ maxLength: 1_000_000, errorMessage: 'must be a string (or an array of one string) of at most 1,000,000 characters' }), Type.Array(Type.String({ maxLength: 1_000_000 }), { minItems: 1, maxItems: 1, errorMessage: 'must be a string (or an array of one string)' })]),
  suffix: Nullable(Type.String({ maxLength: 1_000_000, description: 'Text after the insertion point: fill-in-the-middle, for models that support it (the sandbox model does); 400 otherwise.' })),
  echo: Nullable(Type.Boolean({ const: false, errorMessage: 'must be false (echo is not supported)' })),
});
export type CompletionBody = Static<typeof CompletionBodySchema>;

const UsageSchema = Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() });

export const ChatCompletionSchema = Type.Object({
  id: Type.String(), object: Type.Literal('chat.completion'), created: Type.Integer(), model: Type.String(),
  choices: Type.Array(Type.Object({
    index: Type.Integer(),
    message: Type.Object({ role: Type.Literal('assistant'), content: Type.String(), refusal: Type.Null() }),
    logprobs: Type.Null(),
    finish_reason: Type.String({ description: 'stop, length or content_filter.' }),
  })),
  usage: UsageSchema,
}, { description: 'Streaming (`"stream": true`) answers text/event-stream instead: `chat.completion.chunk` objects, one `data:` line each, ending with `data: [DONE]`.' });

export const CompletionSchema = Type.Object({
  id: Type.String(), object: Type.Literal('text_completion'), created: Type.Integer(), model: Type.String(),
  choices: Type.Array(Type.Object({ index: Type.Integer(), text: Type.String(), logprobs: Type.Null(), finish_reason: Type.String() })),
  usage: UsageSchema,
});

export const OpenAIModelSchema = Type.Object({ id: Type.String(), object: Type.Literal('model'), created: Type.Integer(), owned_by: Type.String() });

export const OpenAIModelListSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(OpenAIModelSchema),
});

export const OpenAIErrorSchema = Type.Object({
  error: Type.Object({ message: Type.String(), type: Type.String(), param: Type.Union([Type.String(), Type.Null()]), code: Type.Union([Type.String(), Type.Null()]) }),
}, { description: "OpenAI's error shape (only on /openai/v1 routes)" });
