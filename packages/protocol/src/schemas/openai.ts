/**
 * The OpenAI-compatible surface under /openai/v1 (docs/openai.md): request bodies as OpenAI's SDKs and
 * editors send them. Fields a client may send that Codeloom does not act on (presence_penalty, seed, …)
 * are accepted and ignored, as OpenAI-compatible servers do; fields it cannot honour are a 400.
 */
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './common.js';

const Nullable = <T extends ReturnType<typeof Type.Integer> | ReturnType<typeof Type.Number> | ReturnType<typeof Type.Boolean> | ReturnType<typeof Type.String>>(t: T) => Type.Optional(Type.Union([t, Type.Null()]));

const TextPart = Type.Object({ type: Type.Literal('text'), text: Type.String({ maxLength: 1_000_000 }) });

/** Most tools one request may offer (OpenAI's own limit). */
export const MAX_TOOLS = 128;
/** Largest JSON schema (a tool's parameters, a response format's schema), in bytes of its JSON text. */
export const MAX_JSON_SCHEMA_BYTES = 100_000;
/** Most stop sequences: OpenAI allows 4, but editors send more (Continue's autocomplete 10–12) and vLLM, Ollama and llama.cpp take any number. */
export const MAX_STOP_SEQUENCES = 64;

const NAME_MESSAGE = 'must be 1 to 64 letters, digits, underscores or dashes';
const ToolName = Type.String({ pattern: '^[a-zA-Z0-9_-]{1,64}$', errorMessage: NAME_MESSAGE });
/** A JSON schema, as an object; its size is checked against MAX_JSON_SCHEMA_BYTES when the request is read. */
const JsonSchemaObject = (description: string) => Type.Unsafe<Record<string, unknown>>({ type: 'object', description, errorMessage: 'must be a JSON schema (an object)' });

export const OpenAIToolCallSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 256 }),
  type: Type.Literal('function'),
  function: Type.Object({ name: ToolName, arguments: Type.String({ maxLength: 1_000_000, description: 'The arguments as JSON text.' }) }),
});

export const OpenAIMessageSchema = Type.Object({
  role: StringEnum(['system', 'developer', 'user', 'assistant', 'tool'] as const),
  content: Type.Optional(Type.Union([Type.String({ maxLength: 1_000_000 }), Type.Array(TextPart, { maxItems: 1000 }), Type.Null()], { errorMessage: 'must be a string or an array of text parts ({"type":"text","text":…})' })),
  name: Type.Optional(Type.String({ maxLength: 256 })),
  tool_calls: Type.Optional(Type.Union([Type.Array(OpenAIToolCallSchema, { maxItems: MAX_TOOLS, errorMessage: `must be an array of at most ${MAX_TOOLS} tool calls` }), Type.Null()], { description: 'An assistant message\'s tool calls (its content may then be null).' })),
  tool_call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'A `tool` message: the id of the tool call it answers.' })),
});

export const OpenAIToolSchema = Type.Object({
  type: Type.Literal('function', { errorMessage: 'must be "function"' }),
  function: Type.Object({
    name: ToolName,
    description: Type.Optional(Type.String({ maxLength: 100_000 })),
    parameters: Type.Optional(JsonSchemaObject(`The arguments' JSON schema (at most ${MAX_JSON_SCHEMA_BYTES} bytes as JSON).`)),
    strict: Nullable(Type.Boolean()),
  }),
});

const TOOL_CHOICE_MESSAGE = 'must be "none", "auto", "required" or {"type": "function", "function": {"name": …}}';
const ToolChoice = Type.Optional(Type.Union([
  Type.Unsafe<'none' | 'auto' | 'required'>({ type: 'string', enum: ['none', 'auto', 'required'], errorMessage: TOOL_CHOICE_MESSAGE }),
  Type.Object({ type: Type.Literal('function', { errorMessage: 'must be "function"' }), function: Type.Object({ name: ToolName }) }, { errorMessage: TOOL_CHOICE_MESSAGE }),
]));

const ResponseFormat = Type.Optional(Type.Union([Type.Object({
  type: Type.Unsafe<'text' | 'json_object' | 'json_schema'>({ type: 'string', enum: ['text', 'json_object', 'json_schema'], errorMessage: 'must be "text", "json_object" or "json_schema"' }),
  json_schema: Type.Optional(Type.Object({
    name: ToolName,
    description: Type.Optional(Type.String({ maxLength: 100_000 })),
    schema: Type.Optional(JsonSchemaObject(`The JSON schema the answer must satisfy (at most ${MAX_JSON_SCHEMA_BYTES} bytes as JSON).`)),
    strict: Nullable(Type.Boolean()),
  })),
}), Type.Null()]));

const STOP_MESSAGE = `must be a string or up to ${MAX_STOP_SEQUENCES} strings of 1 to 256 characters`;
const Stop = Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 256, errorMessage: STOP_MESSAGE }), Type.Array(Type.String({ minLength: 1, maxLength: 256, errorMessage: STOP_MESSAGE }), { maxItems: MAX_STOP_SEQUENCES, errorMessage: STOP_MESSAGE }), Type.Null()], { errorMessage: STOP_MESSAGE }));

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
  tools: Type.Optional(Type.Union([Type.Array(OpenAIToolSchema, { maxItems: MAX_TOOLS, errorMessage: `must be an array of at most ${MAX_TOOLS} tools` }), Type.Null()], { description: `Functions the model may call (at most ${MAX_TOOLS}).` })),
  tool_choice: ToolChoice,
  parallel_tool_calls: Nullable(Type.Boolean()),
  response_format: ResponseFormat,
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
    message: Type.Object({
      role: Type.Literal('assistant'), content: Type.Union([Type.String(), Type.Null()], { description: 'null when the answer is tool calls only.' }), refusal: Type.Null(),
      tool_calls: Type.Optional(Type.Array(OpenAIToolCallSchema)),
    }),
    logprobs: Type.Null(),
    finish_reason: Type.String({ description: 'stop, length, tool_calls or content_filter.' }),
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
