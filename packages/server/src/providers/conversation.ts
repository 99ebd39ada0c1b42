/**
 * The one internal representation of a conversation (docs/decisions/0006-conversation-model.md): every
 * wire format (OpenAI chat completions; later the Responses API and Anthropic's Messages API) decodes
 * into these, every provider encodes from them. A plain text conversation sets none of the optional fields.
 */

/** A call the model made: `arguments` is the JSON text it wrote (OpenAI carries it so; Anthropic's object is serialised once). */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** Text; empty for an assistant turn that only calls tools. */
  content: string;
  /** An assistant turn's tool calls. */
  toolCalls?: ToolCall[];
  /** A tool message: the id of the call it answers. */
  toolCallId?: string;
  /** A tool message reporting that the call failed (Anthropic's `is_error`; OpenAI's wire has no such flag: its text says so). */
  isError?: boolean;
}

/** A JSON schema as a client sent it (validated against JSON Schema's shape by the codec, not here). */
export type JsonSchema = Record<string, unknown>;

export interface ToolDefinition {
  name: string;
  description?: string;
  /** The arguments' JSON schema; absent means no arguments. */
  parameters?: JsonSchema;
  strict?: boolean;
}

export type ToolChoice = 'none' | 'auto' | 'required' | { name: string };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema?: JsonSchema; description?: string; strict?: boolean };

/**
 * A piece of a streamed tool call: `index` orders the calls of one answer (0, 1, …); the first piece of a
 * call carries its `id` and `name`; `arguments` is a fragment of its JSON text (may be empty).
 */
export interface ToolCallDelta {
  type: 'tool-call';
  index: number;
  id?: string;
  name?: string;
  arguments: string;
}

/** What a provider can honour beyond text (absent: nothing beyond text). */
export interface ConversationCapabilities {
  tools: boolean;
  responseFormats: ReadonlyArray<'json_object' | 'json_schema'>;
}

/** The parts of a call these types add (ModelCallOptions and ModelCall carry them). */
export interface ConversationOptions {
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  /** false: at most one tool call per answer. */
  parallelToolCalls?: boolean;
  responseFormat?: ResponseFormat;
}

/** Assembles streamed tool-call deltas into whole calls, in index order. */
export class ToolCallAssembler {
  private readonly calls: Array<{ id: string; name: string; args: string[] }> = [];

  add(delta: ToolCallDelta): void {
    const call = (this.calls[delta.index] ??= { id: '', name: '', args: [] });
    if (delta.id) call.id = delta.id;
    if (delta.name) call.name += delta.name;
    if (delta.arguments) call.args.push(delta.arguments);
  }

  get size(): number {
    return this.calls.length;
  }

  result(): ToolCall[] {
    return this.calls.filter(Boolean).map((c) => ({ id: c.id, name: c.name, arguments: c.args.join('') }));
  }
}

/**
 * The first field of a call the provider cannot honour, as the request's parameter (`tools`,
 * `response_format`, `messages[i]`), or undefined when it can honour all of it.
 */
export function unsupportedField(capabilities: ConversationCapabilities | undefined, call: ConversationOptions & { messages: readonly ChatMessage[] }): string | undefined {
  const tools = capabilities?.tools ?? false;
  if (call.tools?.length && !tools) return 'tools';
  if (call.toolChoice !== undefined && call.toolChoice !== 'none' && call.toolChoice !== 'auto' && !tools) return 'tool_choice';
  const format = call.responseFormat?.type;
  if (format && format !== 'text' && !(capabilities?.responseFormats ?? []).includes(format)) return 'response_format';
  if (!tools) {
    const i = call.messages.findIndex((m) => m.role === 'tool' || m.toolCalls?.length);
    if (i >= 0) return `messages[${i}]`;
  }
  return undefined;
}

/** UTF-8 bytes a call's tool definitions and response schema add to its prompt; 0 when it has neither. */
export function conversationBytes(call: ConversationOptions): number {
  let n = 0;
  if (call.tools) for (const t of call.tools) n += Buffer.byteLength(JSON.stringify(t), 'utf8');
  if (call.responseFormat?.type === 'json_schema') n += Buffer.byteLength(JSON.stringify(call.responseFormat), 'utf8');
  return n;
}

/** UTF-8 bytes a message's tool parts add to its text (its calls' ids, names and arguments; the id a tool result answers). */
export function toolPartBytes(m: ChatMessage): number {
  let n = m.toolCallId ? Buffer.byteLength(m.toolCallId, 'utf8') : 0;
  if (m.toolCalls) for (const c of m.toolCalls) n += 8 + Buffer.byteLength(c.id, 'utf8') + Buffer.byteLength(c.name, 'utf8') + Buffer.byteLength(c.arguments, 'utf8');
  return n;
}
