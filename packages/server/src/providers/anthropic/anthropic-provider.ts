import { lookupTable } from '@codeloom/protocol';
/**
 * ModelProvider for Anthropic's Messages API (POST {base}/v1/messages).
 *
 * Hand-written over fetch instead of @ai-sdk/anthropic, for the same reasons
 * as the OpenAI provider (exact abort/timeout/retry/error control, overhead
 * well under the gateway's 0.3 ms budget); the shared plumbing is in
 * ../http/upstream-http.ts. Anthropic-specific parts: `system` is a
 * top-level field, max_tokens is mandatory, 529 means overloaded, and errors
 * can also arrive in-band as an `error` SSE event.
 */
import type { ChatMessage, FinishReason, GenerateOutput, ModelCallOptions, ModelProvider, ReportedUsage, ToolCall, ToolCallDelta } from '../provider.js';
import type { ResponseFormat } from '../conversation.js';
import { AppError, ProviderError } from '../../errors.js';
import { httpProvider } from '../http/http-provider.js';
import { inBandError, type CallSpec, type HttpProviderOptions, type SseEvent, type StreamDecoder } from '../http/upstream-http.js';

export interface AnthropicProviderOptions extends HttpProviderOptions {
  /** Used when the caller gives none; the API refuses requests without max_tokens. */
  defaultMaxTokens?: number;
  /** anthropic-version header; 2023-06-01 is the current stable Messages API. */
  apiVersion?: string;
}

/** Accepts the official SDK's convention (origin only) as well as a base that already ends in /v1. */
export function anthropicEndpoint(baseUrl: string): string {
  const url = new URL(baseUrl);
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path.endsWith('/v1') ? path : `${path}/v1`}/messages`;
}

export function mapAnthropicStop(reason: unknown): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'refusal':
      return 'content-filter';
    case 'tool_use':
      return 'tool-calls';
    default:
      return 'other'; // pause_turn
  }
}

/** Status codes matching Anthropic's error types, so in-band errors map like HTTP ones. */
const STATUS_OF_TYPE = lookupTable<number>({
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
});

interface WireUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** Cached prompt tokens are still prompt tokens; Anthropic reports them apart from input_tokens. Absent when no input count came. */
function promptTokens(u: WireUsage | undefined): number | undefined {
  if (typeof u?.input_tokens !== 'number') return undefined;
  return u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
}

/** The counts a message (or its start) carried; one left out stays absent (the model call then charges its own count, not 0). */
function toUsage(u: WireUsage | undefined): ReportedUsage {
  const usage: ReportedUsage = {};
  const prompt = promptTokens(u);
  if (prompt !== undefined) usage.promptTokens = prompt;
  if (typeof u?.output_tokens === 'number') usage.completionTokens = u.output_tokens;
  return usage;
}

interface Message {
  type?: string;
  content?: Array<{ type: string; text?: string; id?: string; name?: string; input?: unknown }>;
  stop_reason?: string | null;
  usage?: WireUsage;
}

/**
 * A response format is honoured by a forced tool (docs/openai.md): the request offers one tool whose input
 * schema is the requested schema and makes the model call it; the call's input is the answer's text.
 */
export function structuredTool(format: ResponseFormat | undefined): { name: string; description: string; input_schema: Record<string, unknown> } | undefined {
  if (format?.type === 'json_schema') {
    return { name: format.name, description: format.description ?? 'Give the answer as this tool\'s input: a JSON document valid against its schema.', input_schema: format.schema ?? { type: 'object' } };
  }
  if (format?.type === 'json_object') return { name: 'json_object', description: 'Give the answer as this tool\'s input: a JSON object.', input_schema: { type: 'object' } };
  return undefined;
}

function parseMessage(json: unknown, o?: ModelCallOptions): GenerateOutput {
  const msg = json as Message;
  if (!msg || !Array.isArray(msg.content)) throw new ProviderError('upstream_error', 'the provider sent a response without content', false);
  const structured = structuredTool(o?.responseFormat) !== undefined;
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const b of msg.content) {
    if (b.type === 'text') text += b.text ?? '';
    else if (b.type === 'tool_use') {
      if (structured) text += JSON.stringify(b.input ?? {});
      else toolCalls.push({ id: b.id ?? '', name: b.name ?? '', arguments: JSON.stringify(b.input ?? {}) });
    }
  }
  const stop = mapAnthropicStop(msg.stop_reason);
  const out: GenerateOutput = { text, usage: toUsage(msg.usage), finishReason: structured && stop === 'tool-calls' ? 'stop' : stop };
  if (toolCalls.length > 0) out.toolCalls = toolCalls;
  return out;
}

/** message_start carries input usage; message_delta the cumulative output tokens and stop reason; message_stop ends it. */
class AnthropicDecoder implements StreamDecoder {
  ended = false;
  private usage: ReportedUsage = {};
  private stop: string | null | undefined;
  private stopSequence: string | undefined;
  /** Content block index → the tool call's index among the answer's calls (tool_use blocks only). */
  private toolIndex: Map<number, number> | undefined;

  /** `structured`: the answer is a forced tool's input (a response format), streamed as text. */
  constructor(private readonly apiKey: string, private readonly structured = false) {}

  onEvent(event: SseEvent): string | ToolCallDelta | undefined {
    switch (event.event) {
      case 'content_block_delta': {
        const body = JSON.parse(event.data) as { index?: number; delta?: { type?: string; text?: string; partial_json?: string } };
        const delta = body.delta;
        if (delta?.type === 'text_delta') return delta.text;
        if (delta?.type === 'input_json_delta') {
          if (this.structured) return delta.partial_json;
          const index = this.toolIndex?.get(body.index ?? -1);
          return index === undefined ? undefined : { type: 'tool-call', index, arguments: delta.partial_json ?? '' };
        }
        return undefined;
      }
      case 'content_block_start': {
        const body = JSON.parse(event.data) as { index?: number; content_block?: { type?: string; id?: string; name?: string } };
        const block = body.content_block;
        if (block?.type !== 'tool_use' || this.structured) return undefined;
        this.toolIndex ??= new Map();
        const index = this.toolIndex.size;
        this.toolIndex.set(body.index ?? index, index);
        return { type: 'tool-call', index, id: block.id ?? '', name: block.name ?? '', arguments: '' };
      }
      case 'message_start': {
        const usage = (JSON.parse(event.data) as { message?: { usage?: WireUsage } }).message?.usage;
        this.usage = toUsage(usage);
        return undefined;
      }
      case 'message_delta': {
        const body = JSON.parse(event.data) as { delta?: { stop_reason?: string | null; stop_sequence?: string | null }; usage?: WireUsage };
        if (body.delta?.stop_reason) this.stop = body.delta.stop_reason;
        if (typeof body.delta?.stop_sequence === 'string') this.stopSequence = body.delta.stop_sequence;
        if (body.usage?.output_tokens !== undefined) this.usage.completionTokens = body.usage.output_tokens;
        const prompt = promptTokens(body.usage);
        if (prompt !== undefined) this.usage.promptTokens = prompt;
        return undefined;
      }
      case 'message_stop':
        this.ended = true;
        return undefined;
      case 'error': {
        const type = (JSON.parse(event.data) as { error?: { type?: string } }).error?.type ?? '';
        throw inBandError(event.data, this.apiKey, STATUS_OF_TYPE[type]);
      }
      default:
        return undefined; // ping, content_block_start/stop, and event types added later
    }
  }

  outcome(): { usage: ReportedUsage; finishReason: FinishReason; stopSequence?: string } | undefined {
    if (!this.ended) return undefined;
    const stop = mapAnthropicStop(this.stop);
    return { usage: { ...this.usage }, finishReason: this.structured && stop === 'tool-calls' ? 'stop' : stop, ...(this.stopSequence !== undefined ? { stopSequence: this.stopSequence } : {}) };
  }
}

/** A 400 naming the request's parameter (the caller's field, in OpenAI's naming), for what Anthropic cannot take. */
function refuse(param: string, message: string): AppError {
  return new AppError('validation_failed', `Invalid request: ${param} ${message}.`, { errors: [{ path: `/${param.replace(/\[(\d+)\]/g, '/$1').replace(/\./g, '/')}`, message }] });
}

/**
 * Our messages as Anthropic's: system messages go to `system` (see spec); an assistant's tool calls are
 * `tool_use` blocks after its text; tool results are `tool_result` blocks of one user message (consecutive
 * results together, as Anthropic wants the results of parallel calls).
 */
export function toAnthropicMessages(messages: readonly ChatMessage[]): Array<{ role: 'user' | 'assistant'; content: unknown }> {
  const out: Array<{ role: 'user' | 'assistant'; content: unknown }> = [];
  messages.forEach((m, i) => {
    if (m.role === 'system') return;
    if (m.role === 'tool') {
      const block = { type: 'tool_result', tool_use_id: m.toolCallId ?? '', content: m.content, ...(m.isError ? { is_error: true } : {}) };
      const last = out.at(-1);
      if (last?.role === 'user' && Array.isArray(last.content) && last.content.every((b: { type?: string }) => b.type === 'tool_result')) last.content.push(block);
      else out.push({ role: 'user', content: [block] });
      return;
    }
    if (m.role === 'assistant' && m.toolCalls?.length) {
      const blocks: unknown[] = m.content ? [{ type: 'text', text: m.content }] : [];
      m.toolCalls.forEach((c, j) => {
        let input: unknown;
        try { input = c.arguments.trim() === '' ? {} : JSON.parse(c.arguments); } catch { input = undefined; }
        if (typeof input !== 'object' || input === null || Array.isArray(input)) throw refuse(`messages[${i}].tool_calls[${j}].function.arguments`, 'must be a JSON object for an Anthropic model');
        blocks.push({ type: 'tool_use', id: c.id, name: c.name, input });
      });
      out.push({ role: 'assistant', content: blocks });
      return;
    }
    out.push({ role: m.role, content: m.content });
  });
  return out;
}

/** tools (`input_schema`), tool_choice (`auto` / `any` / `tool` / `none`, `disable_parallel_tool_use`), and a response format as a forced tool. */
function addTools(body: Record<string, unknown>, o: ModelCallOptions): void {
  const structured = structuredTool(o.responseFormat);
  if (structured) {
    if (o.tools?.length) throw refuse('response_format', 'cannot be combined with tools for an Anthropic model (it is carried out as a forced tool call)');
    if (structured.input_schema.type !== undefined && structured.input_schema.type !== 'object') throw refuse('response_format.json_schema.schema', 'must describe an object (type "object") for an Anthropic model');
    body.tools = [structured];
    body.tool_choice = { type: 'tool', name: structured.name };
    return;
  }
  if (!o.tools) return;
  body.tools = o.tools.map((t) => ({ name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), input_schema: t.parameters ?? { type: 'object', properties: {} } }));
  const choice = o.toolChoice;
  const single = o.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  if (choice === 'none') body.tool_choice = { type: 'none' };
  else if (choice === 'required') body.tool_choice = { type: 'any', ...single };
  else if (typeof choice === 'object') body.tool_choice = { type: 'tool', name: choice.name, ...single };
  else if (choice === 'auto' || o.parallelToolCalls === false) body.tool_choice = { type: 'auto', ...single };
}

export function createAnthropicProvider(options: AnthropicProviderOptions): ModelProvider {
  const url = anthropicEndpoint(options.baseUrl);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-api-key': options.apiKey,
    'anthropic-version': options.apiVersion ?? '2023-06-01',
  };

  const spec = (o: ModelCallOptions, stream: boolean): CallSpec => {
    const system = o.messages.filter((m) => m.role === 'system').map((m) => m.content);
    const conversation = o.tools !== undefined || o.responseFormat !== undefined || o.messages.some((m) => m.role === 'tool' || m.toolCalls !== undefined);
    const body: Record<string, unknown> = {
      model: o.model,
      max_tokens: o.maxTokens ?? options.defaultMaxTokens ?? 4096,
      messages: conversation ? toAnthropicMessages(o.messages) : o.messages.filter((m) => m.role !== 'system').map((m) => ({ role: m.role, content: m.content })),
    };
    if (conversation) addTools(body, o);
    if (system.length > 0) body.system = system.join('\n\n');
    if (o.temperature !== undefined) body.temperature = o.temperature;
    if (o.topP !== undefined) body.top_p = o.topP;
    if (o.topK !== undefined) body.top_k = o.topK;
    if (o.stop?.length) body.stop_sequences = o.stop;
    if (stream) body.stream = true;
    // The shared headers object unless the call is traced (only then one copy, with its traceparent).
    return { url, headers: o.traceparent ? { ...headers, traceparent: o.traceparent } : headers, body };
  };

  const provider = httpProvider(options, {
    name: 'anthropic',
    conversation: { tools: true, responseFormats: ['json_object', 'json_schema'] },
    spec,
    decoder: (o) => new AnthropicDecoder(options.apiKey, structuredTool(o.responseFormat) !== undefined),
    parse: parseMessage,
  });
  return { ...provider, topK: true };
}
