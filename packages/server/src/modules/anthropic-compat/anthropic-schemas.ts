/**
 * The Anthropic-compatible surface under /anthropic/v1 (docs/anthropic.md): request bodies as Anthropic's
 * SDKs and Claude Code send them, and Anthropic's answers. Content blocks are checked one by one by the
 * codec (anthropic-request.ts), which names the block a 400 is about (`messages.2.content.0.type`).
 */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_STOP_SEQUENCES, MAX_TOOLS } from '@codeloom/protocol';

/** Anthropic's tool names: letters, digits, underscores and dashes. */
const TOOL_NAME = '^[a-zA-Z0-9_-]{1,128}$';
const ToolName = Type.String({ pattern: TOOL_NAME, errorMessage: 'must be 1 to 128 letters, digits, underscores or dashes' });
const AnyObject = (description: string) => Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description });

/** A content block: its `type` says what it is; the codec checks the rest (text, tool_use, tool_result). */
const Block = Type.Unsafe<{ type: string; [key: string]: unknown }>({
  type: 'object', required: ['type'], additionalProperties: true,
  properties: { type: { type: 'string', minLength: 1, maxLength: 64 } },
  description: 'A content block: `text`, `tool_use` (assistant) or `tool_result` (user); `image` and `document` are refused with a 400.',
  errorMessage: 'must be a content block (an object with a "type")',
});
const Content = Type.Union([Type.String({ maxLength: 1_000_000 }), Type.Array(Block, { maxItems: 1000 })], { errorMessage: 'must be a string or an array of content blocks' });

export const AnthropicMessageParamSchema = Type.Object({
  role: Type.Unsafe<'user' | 'assistant'>({ type: 'string', enum: ['user', 'assistant'], errorMessage: 'must be "user" or "assistant" (the system prompt is the top-level `system`)' }),
  content: Content,
}, { additionalProperties: false });

export const AnthropicToolSchema = Type.Object({
  type: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: '"custom" or absent; Anthropic\'s server tools (bash, web_search, …) are refused with a 400.' })),
  name: ToolName,
  description: Type.Optional(Type.String({ maxLength: 100_000 })),
  input_schema: Type.Optional(AnyObject('The input\'s JSON schema (`type: "object"`).')),
  cache_control: Type.Optional(Type.Union([AnyObject('A prompt-caching hint; accepted and not acted on.'), Type.Null()])),
}, { additionalProperties: false });

const ToolChoiceSchema = Type.Object({
  type: Type.Unsafe<'auto' | 'any' | 'tool' | 'none'>({ type: 'string', enum: ['auto', 'any', 'tool', 'none'], errorMessage: 'must be one of: auto, any, tool, none' }),
  name: Type.Optional(ToolName),
  disable_parallel_tool_use: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });

const System = Type.Optional(Type.Union([Type.String({ maxLength: 1_000_000 }), Type.Array(Block, { maxItems: 1000 })], { errorMessage: 'must be a string or an array of text blocks' }));
const Thinking = Type.Optional(Type.Object({ type: Type.String({ maxLength: 64 }), budget_tokens: Type.Optional(Type.Integer()) }, { additionalProperties: true, description: 'Only `{"type": "disabled"}`: extended thinking is a 400 naming `thinking`.' }));

const Conversation = {
  model: Type.String({ minLength: 1, maxLength: 200, description: 'A model id of GET /anthropic/v1/models.' }),
  messages: Type.Array(AnthropicMessageParamSchema, { minItems: 1, maxItems: 1000 }),
  system: System,
  tools: Type.Optional(Type.Array(AnthropicToolSchema, { maxItems: MAX_TOOLS, errorMessage: `must be an array of at most ${MAX_TOOLS} tools` })),
  tool_choice: Type.Optional(ToolChoiceSchema),
  thinking: Thinking,
};

export const AnthropicMessagesBodySchema = Type.Object({
  ...Conversation,
  max_tokens: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Required, as Anthropic requires it.' }),
  stop_sequences: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: MAX_STOP_SEQUENCES, errorMessage: `must be an array of at most ${MAX_STOP_SEQUENCES} strings of 1 to 256 characters` })),
  stream: Type.Optional(Type.Boolean()),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  top_k: Type.Optional(Type.Integer({ minimum: 1, description: 'Only for models that take it (Anthropic models, the sandbox model); a 400 naming `top_k` for the others.' })),
  metadata: Type.Optional(Type.Object({ user_id: Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Null()])) }, { additionalProperties: false, description: 'Informational; not acted on.' })),
  service_tier: Type.Optional(Type.Unsafe<'auto' | 'standard_only'>({ type: 'string', enum: ['auto', 'standard_only'], description: 'Accepted; Codeloom has one tier.' })),
}, { additionalProperties: false });
export type AnthropicMessagesBody = Static<typeof AnthropicMessagesBodySchema>;

export const AnthropicCountTokensBodySchema = Type.Object(Conversation, { additionalProperties: false });
export type AnthropicCountTokensBody = Static<typeof AnthropicCountTokensBodySchema>;

const UsageSchema = Type.Object({
  input_tokens: Type.Integer(),
  cache_creation_input_tokens: Type.Integer({ description: 'Always 0: Codeloom does not cache prompts.' }),
  cache_read_input_tokens: Type.Integer({ description: 'Always 0.' }),
  cache_creation: Type.Object({ ephemeral_5m_input_tokens: Type.Integer(), ephemeral_1h_input_tokens: Type.Integer() }, { description: 'Always 0s.' }),
  output_tokens: Type.Integer(),
  service_tier: Type.String({ description: 'Always "standard".' }),
});

export const AnthropicMessageSchema = Type.Object({
  id: Type.String({ description: 'msg_…' }),
  type: Type.Literal('message'),
  role: Type.Literal('assistant'),
  model: Type.String({ description: 'The model that served (a fallback names itself).' }),
  content: Type.Array(AnyObject('`{"type": "text", "text"}` or `{"type": "tool_use", "id": "toolu_…", "name", "input"}`.')),
  stop_reason: Type.String({ description: 'end_turn, max_tokens, stop_sequence or tool_use.' }),
  stop_sequence: Type.Union([Type.String(), Type.Null()]),
  usage: UsageSchema,
}, { description: 'Streaming (`"stream": true`) answers text/event-stream instead: message_start, content_block_start, ping, content_block_delta, content_block_stop, message_delta, message_stop.' });

export const AnthropicCountTokensSchema = Type.Object({ input_tokens: Type.Integer({ description: 'The sandbox\'s exact count; for other models the upper bound Codeloom\'s token windows reserve.' }) });

export const AnthropicModelSchema = Type.Object({
  type: Type.Literal('model'), id: Type.String(), display_name: Type.String(), created_at: Type.String({ description: 'RFC 3339; the server\'s start (models have no creation time of their own).' }),
});
export const AnthropicModelListSchema = Type.Object({
  data: Type.Array(AnthropicModelSchema), has_more: Type.Boolean(), first_id: Type.Union([Type.String(), Type.Null()]), last_id: Type.Union([Type.String(), Type.Null()]),
});
export const AnthropicModelListQuerySchema = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 20 })),
  after_id: Type.Optional(Type.String({ maxLength: 200 })),
  before_id: Type.Optional(Type.String({ maxLength: 200 })),
});

export const AnthropicErrorSchema = Type.Object({
  type: Type.Literal('error'),
  error: Type.Object({ type: Type.String(), message: Type.String() }),
  request_id: Type.String(),
}, { description: 'Anthropic\'s error shape (only on /anthropic routes)' });
