/**
 * OpenAI's Responses API under /openai/v1/responses (docs/openai.md, CONTRACT §12.3): the request body as
 * the `openai` SDKs and the Codex CLI send it, and the `response` object they read. Input items are checked
 * item by item when the request is read (a 400 naming `input[i]…`), so the schema here only bounds them.
 * Fields Codeloom does not act on (`reasoning`, `include`, `truncation`, `prompt_cache_key`, `user`, …)
 * are accepted and ignored, as for chat completions.
 */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_TOOLS } from './openai.js';

const Nullable = <T extends ReturnType<typeof Type.Integer> | ReturnType<typeof Type.Number> | ReturnType<typeof Type.Boolean> | ReturnType<typeof Type.String>>(t: T) => Type.Optional(Type.Union([t, Type.Null()]));

/** Most input items one request may carry (messages, function calls and their outputs). */
export const MAX_RESPONSE_INPUT_ITEMS = 2000;

const Part = Type.Object({
  type: Type.String({ maxLength: 64, description: '`input_text` or `output_text` (text is the only content Codeloom takes).' }),
  text: Type.Optional(Type.String({ maxLength: 1_000_000 })),
});
const Content = Type.Union([Type.String({ maxLength: 1_000_000 }), Type.Array(Part, { maxItems: 1000 })], { errorMessage: 'must be a string or an array of content parts ({"type": "input_text", "text": …})' });

export const ResponseInputItemSchema = Type.Object({
  type: Type.Optional(Type.String({ maxLength: 64, description: '`message` (the default when `role` is set), `function_call` or `function_call_output`.' })),
  role: Type.Optional(Type.String({ maxLength: 32, description: 'A message: `user`, `assistant`, `system` or `developer`.' })),
  content: Type.Optional(Type.Union([Content, Type.Null()])),
  id: Type.Optional(Type.String({ maxLength: 256 })),
  status: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])),
  call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'A function call\'s id (`function_call`), or the call an output answers (`function_call_output`).' })),
  name: Type.Optional(Type.String({ maxLength: 256 })),
  arguments: Type.Optional(Type.String({ maxLength: 1_000_000, description: 'A function call\'s arguments as JSON text.' })),
  output: Type.Optional(Type.Union([Content, Type.Null()])),
}, { description: 'An input item: a message (`role`, `content`), a `function_call` the model made earlier, or a `function_call_output` (`call_id`, `output`).' });

const JsonSchemaObject = (description: string) => Type.Unsafe<Record<string, unknown>>({ type: 'object', description, errorMessage: 'must be a JSON schema (an object)' });

export const ResponseToolSchema = Type.Object({
  type: Type.String({ maxLength: 64, description: 'Only `function` (other tool types are a 400 naming `tools`).' }),
  name: Type.Optional(Type.String({ maxLength: 256 })),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 100_000 }), Type.Null()])),
  parameters: Type.Optional(Type.Union([JsonSchemaObject('The arguments\' JSON schema.'), Type.Null()])),
  strict: Nullable(Type.Boolean()),
});

const TOOL_CHOICE_MESSAGE = 'must be "none", "auto", "required" or {"type": "function", "name": …}';
const ToolChoice = Type.Union([
  Type.Unsafe<'none' | 'auto' | 'required'>({ type: 'string', enum: ['none', 'auto', 'required'], errorMessage: TOOL_CHOICE_MESSAGE }),
  Type.Object({ type: Type.String({ maxLength: 64 }), name: Type.Optional(Type.String({ maxLength: 256 })) }, { errorMessage: TOOL_CHOICE_MESSAGE }),
]);

export const ResponseTextFormatSchema = Type.Object({
  type: Type.Unsafe<'text' | 'json_object' | 'json_schema'>({ type: 'string', enum: ['text', 'json_object', 'json_schema'], errorMessage: 'must be "text", "json_object" or "json_schema"' }),
  name: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9_-]{1,64}$', errorMessage: 'must be 1 to 64 letters, digits, underscores or dashes' })),
  schema: Type.Optional(JsonSchemaObject('With `json_schema`: the schema the answer must satisfy.')),
  description: Type.Optional(Type.String({ maxLength: 100_000 })),
  strict: Nullable(Type.Boolean()),
});

export const ResponsesBodySchema = Type.Object({
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A model id of GET /openai/v1/models; default: the server\'s default model.' })),
  input: Type.Optional(Type.Union([Type.String({ maxLength: 1_000_000 }), Type.Array(ResponseInputItemSchema, { maxItems: MAX_RESPONSE_INPUT_ITEMS })], { errorMessage: `must be a string or an array of at most ${MAX_RESPONSE_INPUT_ITEMS} input items` })),
  instructions: Nullable(Type.String({ maxLength: 1_000_000, description: 'A system message for this response only (not carried over by `previous_response_id`).' })),
  tools: Type.Optional(Type.Union([Type.Array(ResponseToolSchema, { maxItems: MAX_TOOLS, errorMessage: `must be an array of at most ${MAX_TOOLS} tools` }), Type.Null()])),
  tool_choice: Type.Optional(Type.Union([ToolChoice, Type.Null()])),
  parallel_tool_calls: Nullable(Type.Boolean()),
  max_output_tokens: Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  temperature: Nullable(Type.Number({ minimum: 0, maximum: 2 })),
  top_p: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
  text: Type.Optional(Type.Union([Type.Object({ format: Type.Optional(ResponseTextFormatSchema), verbosity: Type.Optional(Type.Union([Type.String({ maxLength: 16 }), Type.Null()])) }), Type.Null()])),
  stream: Nullable(Type.Boolean()),
  previous_response_id: Nullable(Type.String({ minLength: 1, maxLength: 64, description: 'Continue a stored response of this organization: its input and output come before this input.' })),
  store: Nullable(Type.Boolean({ description: 'Keep the response (default true) for GET, DELETE and `previous_response_id`.' })),
  metadata: Type.Optional(Type.Union([Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 512 }), { maxProperties: 16, errorMessage: 'must be an object of at most 16 string values (keys up to 64, values up to 512 characters)' }), Type.Null()])),
  background: Nullable(Type.Boolean({ const: false, errorMessage: 'must be false (background responses are not supported)' })),
  user: Type.Optional(Type.String({ maxLength: 256 })),
});
export type ResponsesBody = Static<typeof ResponsesBodySchema>;
export type ResponseInputItem = Static<typeof ResponseInputItemSchema>;

const Item = Type.Unsafe<Record<string, unknown>>({
  type: 'object', additionalProperties: true, required: ['type'],
  description: '`{"type": "message", "id": "msg_…", "role": "assistant", "status", "content": [{"type": "output_text", "text", "annotations": []}]}` or `{"type": "function_call", "id": "fc_…", "call_id", "name", "arguments", "status"}`',
});

export const ResponseObjectSchema = Type.Object({
  id: Type.String({ description: '`resp_…`' }),
  object: Type.Literal('response'),
  created_at: Type.Integer(),
  status: Type.String({ description: '`completed`, `incomplete` or `failed`.' }),
  error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
  incomplete_details: Type.Union([Type.Object({ reason: Type.String() }), Type.Null()]),
  instructions: Type.Union([Type.String(), Type.Null()]),
  max_output_tokens: Type.Union([Type.Integer(), Type.Null()]),
  model: Type.String(),
  output: Type.Array(Item),
  parallel_tool_calls: Type.Boolean(),
  previous_response_id: Type.Union([Type.String(), Type.Null()]),
  store: Type.Boolean(),
  temperature: Type.Union([Type.Number(), Type.Null()]),
  top_p: Type.Union([Type.Number(), Type.Null()]),
  text: Type.Object({ format: Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true }) }, { additionalProperties: true }),
  tool_choice: Type.Unsafe<unknown>({ description: '`none`, `auto`, `required` or `{"type": "function", "name"}`' }),
  tools: Type.Array(Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true })),
  usage: Type.Union([Type.Object({
    input_tokens: Type.Integer(), input_tokens_details: Type.Object({ cached_tokens: Type.Integer() }),
    output_tokens: Type.Integer(), output_tokens_details: Type.Object({ reasoning_tokens: Type.Integer() }), total_tokens: Type.Integer(),
  }), Type.Null()]),
  metadata: Type.Record(Type.String(), Type.String()),
}, { additionalProperties: true, description: 'OpenAI\'s `response` object. Streaming (`"stream": true`) answers text/event-stream instead: `event: <type>` / `data: {"type", "sequence_number", …}` from `response.created` to `response.completed` (or `response.incomplete` / `response.failed`).' });

export const ResponseDeletedSchema = Type.Object({ id: Type.String(), object: Type.Literal('response'), deleted: Type.Literal(true) });
