import { MAX_JSON_SCHEMA_BYTES, type ResponseInputItem, type ResponsesBody } from '@codeloom/protocol';
import { AppError } from '../../errors.js';
import type { ChatMessage } from '../../providers/provider.js';
import type { ConversationOptions, ResponseFormat, ToolDefinition } from '../../providers/conversation.js';

/**
 * The inbound codec of OpenAI's Responses API (docs/decisions/0006-conversation-model.md): a request body as the
 * internal conversation (messages, tool calls, tool results, tools, response format), plus what the answer
 * echoes back (tools, tool_choice, text, …) in OpenAI's own terms.
 */
export interface ResponsesCallSpec {
  model: string | undefined;
  /** A system message for this response only (not part of the stored conversation). */
  instructions: string | null;
  /** This request's input items as messages (a previous response's conversation goes before them). */
  input: ChatMessage[];
  /** The `call_id` of each `function_call_output` item, with the parameter that names it (checked against the whole conversation). */
  outputs: Array<{ callId: string; param: string }>;
  maxTokens: number | undefined;
  temperature: number | undefined;
  topP: number | undefined;
  conversation: ConversationOptions;
  stream: boolean;
  store: boolean;
  previousResponseId: string | null;
  metadata: Record<string, string>;
  /** The request's settings as the `response` object repeats them. */
  echo: { tools: Array<Record<string, unknown>>; tool_choice: unknown; text: { format: Record<string, unknown> }; parallel_tool_calls: boolean };
}

/** A 400 naming the parameter (`input[2].call_id`), in the shape schema validation answers. */
export function invalid(param: string, message: string): AppError {
  const path = `/${param.replace(/\[(\d+)\]/g, '/$1').replace(/\./g, '/')}`;
  return new AppError('validation_failed', `Invalid request: ${param} ${message}.`, { errors: [{ path, message }] });
}

const ROLES = { user: 'user', assistant: 'assistant', system: 'system', developer: 'system' } as const;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Text of a message's content (a string, or input_text / output_text parts); any other part is a 400 naming it. */
function textOf(content: string | Array<{ type: string; text?: string | undefined }>, param: string): string {
  if (typeof content === 'string') return content;
  return content.map((p, j) => {
    if (p.type !== 'input_text' && p.type !== 'output_text' && p.type !== 'text') {
      throw invalid(`${param}[${j}]`, `is a "${p.type}" part; only text parts (input_text, output_text) are supported`);
    }
    if (typeof p.text !== 'string') throw invalid(`${param}[${j}].text`, 'is required (a string)');
    return p.text;
  }).join('');
}

/** Input items as messages: consecutive function calls (and the assistant text before them) form one assistant turn. */
export function toInputMessages(input: ResponsesBody['input']): { messages: ChatMessage[]; outputs: Array<{ callId: string; param: string }> } {
  if (input === undefined) return { messages: [], outputs: [] };
  if (typeof input === 'string') return { messages: [{ role: 'user', content: input }], outputs: [] };
  const messages: ChatMessage[] = [];
  const outputs: Array<{ callId: string; param: string }> = [];
  input.forEach((item: ResponseInputItem, i) => {
    const at = `input[${i}]`;
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    switch (type) {
      case 'message': {
        const role = ROLES[item.role as keyof typeof ROLES];
        if (!role) throw invalid(`${at}.role`, 'must be "user", "assistant", "system" or "developer"');
        if (item.content == null) throw invalid(`${at}.content`, 'is required on a message');
        messages.push({ role, content: textOf(item.content, `${at}.content`) });
        return;
      }
      case 'function_call': {
        if (item.call_id === undefined) throw invalid(`${at}.call_id`, 'is required on a function_call item');
        if (item.name === undefined || !TOOL_NAME.test(item.name)) throw invalid(`${at}.name`, 'must be a function name (1 to 64 letters, digits, underscores or dashes)');
        if (item.arguments === undefined) throw invalid(`${at}.arguments`, 'is required on a function_call item (JSON text)');
        const call = { id: item.call_id, name: item.name, arguments: item.arguments };
        const last = messages.at(-1);
        if (last?.role === 'assistant') (last.toolCalls ??= []).push(call);
        else messages.push({ role: 'assistant', content: '', toolCalls: [call] });
        return;
      }
      case 'function_call_output': {
        if (item.call_id === undefined) throw invalid(`${at}.call_id`, 'is required on a function_call_output item');
        if (item.output == null) throw invalid(`${at}.output`, 'is required on a function_call_output item');
        messages.push({ role: 'tool', content: textOf(item.output, `${at}.output`), toolCallId: item.call_id });
        outputs.push({ callId: item.call_id, param: `${at}.call_id` });
        return;
      }
      // A model's reasoning, sent back by clients that keep the whole transcript: it carries nothing the model reads again.
      case 'reasoning':
        return;
      case undefined:
        throw invalid(`${at}.type`, 'is required (message, function_call or function_call_output)');
      default:
        throw invalid(`${at}.type`, `"${type}" is not supported; input items are message, function_call and function_call_output`);
    }
  });
  return { messages, outputs };
}

function checkSchemaSize(schema: unknown, param: string): void {
  if (schema != null && Buffer.byteLength(JSON.stringify(schema), 'utf8') > MAX_JSON_SCHEMA_BYTES) {
    throw invalid(param, `must be a JSON schema of at most ${MAX_JSON_SCHEMA_BYTES} bytes`);
  }
}

function toTools(body: ResponsesBody): { tools: ToolDefinition[] | undefined; echo: Array<Record<string, unknown>> } {
  if (!body.tools?.length) return { tools: undefined, echo: [] };
  const names = new Set<string>();
  const tools = body.tools.map((t, i): ToolDefinition => {
    if (t.type !== 'function') throw invalid('tools', `[${i}] is a "${t.type}" tool; only "function" tools are supported`);
    if (t.name === undefined || !TOOL_NAME.test(t.name)) throw invalid(`tools[${i}].name`, 'must be 1 to 64 letters, digits, underscores or dashes');
    if (names.has(t.name)) throw invalid(`tools[${i}].name`, `repeats the tool name "${t.name}"`);
    names.add(t.name);
    checkSchemaSize(t.parameters, `tools[${i}].parameters`);
    const tool: ToolDefinition = { name: t.name };
    if (t.description != null) tool.description = t.description;
    if (t.parameters != null) tool.parameters = t.parameters;
    if (t.strict != null) tool.strict = t.strict;
    return tool;
  });
  const echo = body.tools.map((t) => ({ type: 'function', name: t.name, description: t.description ?? null, parameters: t.parameters ?? null, strict: t.strict ?? null }));
  return { tools, echo };
}

function toFormat(body: ResponsesBody): { format: ResponseFormat | undefined; echo: Record<string, unknown> } {
  const f = body.text?.format;
  if (!f || f.type === 'text') return { format: undefined, echo: { type: 'text' } };
  if (f.type === 'json_object') return { format: { type: 'json_object' }, echo: { type: 'json_object' } };
  if (f.name === undefined) throw invalid('text.format.name', 'is required when text.format.type is "json_schema"');
  if (f.schema === undefined) throw invalid('text.format.schema', 'is required when text.format.type is "json_schema"');
  checkSchemaSize(f.schema, 'text.format.schema');
  const format: ResponseFormat = { type: 'json_schema', name: f.name, schema: f.schema, ...(f.description !== undefined ? { description: f.description } : {}), ...(f.strict != null ? { strict: f.strict } : {}) };
  return { format, echo: { type: 'json_schema', name: f.name, schema: f.schema, ...(f.description !== undefined ? { description: f.description } : {}), strict: f.strict ?? null } };
}

const orUndefined = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

/** A Responses API request in Codeloom's terms; what it cannot express is a 400 naming the field. */
export function fromResponsesBody(body: ResponsesBody): ResponsesCallSpec {
  const { messages, outputs } = toInputMessages(body.input);
  if (messages.length === 0 && !body.previous_response_id) throw invalid('input', 'is required (a string or input items), unless previous_response_id continues a stored response');
  const { tools, echo: toolsEcho } = toTools(body);
  const { format, echo: formatEcho } = toFormat(body);
  const conversation: ConversationOptions = {};
  if (tools) conversation.tools = tools;
  let choiceEcho: unknown = 'auto';
  const choice = body.tool_choice;
  if (choice != null) {
    if (typeof choice === 'object') {
      if (choice.type !== 'function') throw invalid('tool_choice', `of type "${choice.type}" is not supported; use "none", "auto", "required" or {"type": "function", "name": …}`);
      if (choice.name === undefined || !tools?.some((t) => t.name === choice.name)) throw invalid('tool_choice.name', `names "${choice.name ?? ''}", which is not one of the request's tools`);
      conversation.toolChoice = { name: choice.name };
      choiceEcho = { type: 'function', name: choice.name };
    } else {
      if (choice === 'required' && !tools) throw invalid('tool_choice', 'is "required" but the request has no tools');
      if (tools) conversation.toolChoice = choice;
      choiceEcho = choice;
    }
  }
  if (body.parallel_tool_calls != null && tools) conversation.parallelToolCalls = body.parallel_tool_calls;
  if (format) conversation.responseFormat = format;
  return {
    model: body.model,
    instructions: body.instructions ?? null,
    input: messages,
    outputs,
    maxTokens: orUndefined(body.max_output_tokens),
    temperature: orUndefined(body.temperature),
    topP: orUndefined(body.top_p),
    conversation,
    stream: body.stream === true,
    store: body.store !== false,
    previousResponseId: body.previous_response_id ?? null,
    metadata: body.metadata ?? {},
    echo: { tools: toolsEcho, tool_choice: choiceEcho, text: { format: formatEcho }, parallel_tool_calls: body.parallel_tool_calls ?? true },
  };
}
