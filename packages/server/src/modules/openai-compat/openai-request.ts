import { MAX_JSON_SCHEMA_BYTES, type ChatCompletionBody, type CompletionBody } from '@codeloom/protocol';
import { AppError } from '../../errors.js';
import type { ChatMessage } from '../../providers/provider.js';
import type { ConversationOptions, ToolDefinition } from '../../providers/conversation.js';

/** What one OpenAI-style request asks of a model, in Codeloom's terms. */
export interface OpenAICallSpec {
  model: string | undefined;
  messages: ChatMessage[];
  maxTokens: number | undefined;
  temperature: number | undefined;
  topP: number | undefined;
  stop: string[] | undefined;
  suffix: string | undefined;
  /** POST /completions: the prompt is continued as it is (raw) where the back-end takes raw prompts. */
  rawPrompt?: boolean;
  stream: boolean;
  includeUsage: boolean;
  /** Tools, tool choice, parallel_tool_calls and response format: only the fields the request set (none for plain chat). */
  conversation: ConversationOptions;
}

/** A 400 naming the parameter (`messages[2].tool_call_id`), as schema validation answers. */
function invalid(param: string, message: string): AppError {
  const path = `/${param.replace(/\[(\d+)\]/g, '/$1').replace(/\./g, '/')}`;
  return new AppError('validation_failed', `Invalid request: ${param} ${message}.`, { errors: [{ path, message }] });
}

function checkSchemaSize(schema: unknown, param: string): void {
  if (schema !== undefined && Buffer.byteLength(JSON.stringify(schema), 'utf8') > MAX_JSON_SCHEMA_BYTES) {
    throw invalid(param, `must be a JSON schema of at most ${MAX_JSON_SCHEMA_BYTES} bytes`);
  }
}

/** OpenAI's messages as ours: `developer` is `system`, text parts joined, assistant tool calls and tool results kept. */
function toMessages(messages: ChatCompletionBody['messages']): ChatMessage[] {
  return messages.map((m, i) => {
    if (m.tool_calls?.length && m.role !== 'assistant') throw invalid(`messages[${i}].tool_calls`, 'is only allowed on assistant messages');
    if (m.tool_call_id !== undefined && m.role !== 'tool') throw invalid(`messages[${i}].tool_call_id`, 'is only allowed on tool messages');
    if (m.role === 'tool') {
      if (m.tool_call_id === undefined) throw invalid(`messages[${i}].tool_call_id`, 'is required on a tool message (the id of the tool call it answers)');
      return { role: 'tool', content: textOf(m.content ?? null), toolCallId: m.tool_call_id };
    }
    const message: ChatMessage = { role: m.role === 'developer' ? 'system' : m.role, content: textOf(m.content ?? null) };
    if (m.tool_calls?.length) message.toolCalls = m.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
    return message;
  });
}

/** tools, tool_choice, parallel_tool_calls and response_format in our terms; only what the request set. */
function toConversation(body: ChatCompletionBody): ConversationOptions {
  const out: ConversationOptions = {};
  if (body.tools?.length) {
    const names = new Set<string>();
    out.tools = body.tools.map((t, i): ToolDefinition => {
      if (names.has(t.function.name)) throw invalid(`tools[${i}].function.name`, `repeats the tool name "${t.function.name}"`);
      names.add(t.function.name);
      checkSchemaSize(t.function.parameters, `tools[${i}].function.parameters`);
      const tool: ToolDefinition = { name: t.function.name };
      if (t.function.description !== undefined) tool.description = t.function.description;
      if (t.function.parameters !== undefined) tool.parameters = t.function.parameters;
      if (t.function.strict != null) tool.strict = t.function.strict;
      return tool;
    });
  }
  const choice = body.tool_choice;
  if (choice !== undefined) {
    if (typeof choice === 'object') {
      if (!out.tools?.some((t) => t.name === choice.function.name)) throw invalid('tool_choice.function.name', `names "${choice.function.name}", which is not one of the request's tools`);
      out.toolChoice = { name: choice.function.name };
    } else {
      if (choice === 'required' && !out.tools) throw invalid('tool_choice', 'is "required" but the request has no tools');
      if (out.tools) out.toolChoice = choice;
    }
  }
  if (body.parallel_tool_calls != null && out.tools) out.parallelToolCalls = body.parallel_tool_calls;
  const format = body.response_format;
  if (format?.type === 'json_schema') {
    if (!format.json_schema) throw invalid('response_format.json_schema', 'is required when response_format.type is "json_schema"');
    checkSchemaSize(format.json_schema.schema, 'response_format.json_schema.schema');
    const { name, schema, description, strict } = format.json_schema;
    out.responseFormat = { type: 'json_schema', name, ...(schema !== undefined ? { schema } : {}), ...(description !== undefined ? { description } : {}), ...(strict != null ? { strict } : {}) };
  } else if (format?.type === 'json_object') {
    out.responseFormat = { type: 'json_object' };
  }
  return out;
}

const textOf = (content: ChatCompletionBody['messages'][number]['content']): string =>
  typeof content === 'string' ? content : content == null ? '' : content.map((p) => p.text).join('');

const orUndefined = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

function common(body: ChatCompletionBody | CompletionBody) {
  return {
    model: body.model,
    temperature: orUndefined(body.temperature),
    topP: orUndefined(body.top_p),
    stop: body.stop == null ? undefined : typeof body.stop === 'string' ? [body.stop] : body.stop,
    stream: body.stream === true,
    includeUsage: body.stream_options?.include_usage === true,
  };
}

/** Chat: `developer` is the newer name of `system`; text parts are joined into one string. */
export function fromChatBody(body: ChatCompletionBody): OpenAICallSpec {
  return {
    ...common(body),
    messages: toMessages(body.messages),
    maxTokens: orUndefined(body.max_completion_tokens) ?? orUndefined(body.max_tokens),
    suffix: undefined,
    conversation: body.tools || body.tool_choice || body.response_format ? toConversation(body) : NO_CONVERSATION,
  };
}

/**
 * Completions: the prompt is one user message, marked raw so that an OpenAI-compatible back-end gets it unchanged
 * on its /v1/completions (with a suffix, fill-in-the-middle; without, as an editor's own template wrote it).
 */
export function fromCompletionBody(body: CompletionBody): OpenAICallSpec {
  const prompt = typeof body.prompt === 'string' ? body.prompt : body.prompt[0]!;
  return { ...common(body), messages: [{ role: 'user', content: prompt }], maxTokens: orUndefined(body.max_tokens), suffix: orUndefined(body.suffix), rawPrompt: true, conversation: NO_CONVERSATION };
}

const NO_CONVERSATION: ConversationOptions = Object.freeze({});

/** OpenAI's finish_reason for ours. */
export function toFinishReason(reason: string): string {
  return reason === 'length' ? 'length' : reason === 'tool-calls' ? 'tool_calls' : reason === 'content-filter' ? 'content_filter' : 'stop';
}
