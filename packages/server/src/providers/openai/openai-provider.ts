/**
 * ModelProvider for any OpenAI-compatible chat-completions server (OpenAI,
 * vLLM, Ollama, llama.cpp server, LM Studio, ...).
 *
 * Hand-written over fetch instead of @ai-sdk/openai-compatible: we need exact
 * control over abort, idle timeouts, retry-before-first-token and error
 * mapping, and the per-request overhead must stay far below the gateway's
 * 0.3 ms budget — see ../http/upstream-http.ts for the details. The wire format is
 * the one every compatible server implements: POST {base}/chat/completions.
 */
import type { ChatMessage, FinishReason, GenerateOutput, ModelCallOptions, ModelProvider, ReportedUsage, StreamPart, ToolCall, ToolCallDelta } from '../provider.js';
import type { ConversationOptions } from '../conversation.js';
import { ProviderError } from '../../errors.js';
import { httpProvider } from '../http/http-provider.js';
import { inBandError, type CallSpec, type HttpProviderOptions, type SseEvent, type StreamDecoder } from '../http/upstream-http.js';

export type { HttpProviderOptions } from '../http/upstream-http.js';
export type OpenAIProviderOptions = HttpProviderOptions;

/**
 * Accepts the base URL with or without the version segment: a bare origin
 * (http://localhost:11434) gets /v1, anything with a path is used as given
 * (https://api.groq.com/openai/v1, .../v1beta/openai).
 */
export function openAIEndpoint(baseUrl: string): string {
  const url = new URL(baseUrl);
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path === '' ? '/v1' : path}/chat/completions`;
}

/** The legacy completions endpoint next to chat completions: where fill-in-the-middle (prompt + suffix) goes. */
export function openAICompletionsEndpoint(baseUrl: string): string {
  return openAIEndpoint(baseUrl).replace(/\/chat\/completions$/, '/completions');
}

export function mapOpenAIFinish(reason: unknown): FinishReason {
  switch (reason) {
    case 'stop':
      return 'stop';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content-filter';
    case 'tool_calls':
    case 'function_call':
      return 'tool-calls';
    default:
      return 'other'; // vendor extensions
  }
}

interface WireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

/** The counts the server sent; one it left out stays absent (the model call then charges its own count, not 0). */
function toUsage(u: WireUsage | undefined | null): ReportedUsage {
  const usage: ReportedUsage = {};
  if (typeof u?.prompt_tokens === 'number') usage.promptTokens = u.prompt_tokens;
  if (typeof u?.completion_tokens === 'number') usage.completionTokens = u.completion_tokens;
  return usage;
}

interface WireToolCall {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

interface ChatCompletion {
  /** `message` from chat completions, `text` from legacy (fill-in-the-middle) completions. */
  choices?: Array<{ message?: { content?: string | null; tool_calls?: WireToolCall[] | null }; text?: string | null; finish_reason?: string | null }>;
  usage?: WireUsage;
  error?: unknown;
}

function parseCompletion(json: unknown): GenerateOutput {
  const body = json as ChatCompletion;
  const choice = body?.choices?.[0];
  if (!choice) throw new ProviderError('upstream_error', 'the provider sent a response without choices', false);
  const out: GenerateOutput = { text: choice.message?.content ?? choice.text ?? '', usage: toUsage(body.usage), finishReason: mapOpenAIFinish(choice.finish_reason) };
  const calls = choice.message?.tool_calls;
  if (calls?.length) out.toolCalls = calls.map((c): ToolCall => ({ id: c.id ?? '', name: c.function?.name ?? '', arguments: c.function?.arguments ?? '' }));
  return out;
}

/** Streamed `delta.tool_calls` entries as our pieces (a server may send several in one chunk, or a whole call at once). */
function toDeltas(calls: WireToolCall[]): ToolCallDelta[] {
  return calls.map((c, i) => {
    const d: ToolCallDelta = { type: 'tool-call', index: c.index ?? i, arguments: c.function?.arguments ?? '' };
    if (c.id) d.id = c.id;
    if (c.function?.name) d.name = c.function.name;
    return d;
  });
}

interface ChatChunk {
  choices?: Array<{ delta?: { content?: string | null; tool_calls?: WireToolCall[] | null }; text?: string | null; finish_reason?: string | null }>;
  usage?: WireUsage | null;
  error?: unknown;
}

/**
 * Usage arrives in a trailing chunk with empty `choices` (OpenAI, vLLM) or
 * alongside finish_reason (llama.cpp); keep whatever came last. The stream
 * is complete at `data: [DONE]`, or at a clean EOF after a finish_reason.
 */
class OpenAIDecoder implements StreamDecoder {
  ended = false;
  private finish: string | null | undefined;
  private usage: WireUsage | undefined;

  constructor(private readonly apiKey: string) {}

  onEvent(event: SseEvent): string | StreamPart[] | undefined {
    if (event.data === '[DONE]') {
      this.ended = true;
      return undefined;
    }
    const chunk = JSON.parse(event.data) as ChatChunk;
    // Mid-stream failures (vLLM, OpenRouter) arrive as a data chunk carrying `error`.
    if (chunk.error) throw inBandError(event.data, this.apiKey);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return undefined;
    if (choice.finish_reason) this.finish = choice.finish_reason;
    const calls = choice.delta?.tool_calls;
    if (calls?.length) {
      const deltas: StreamPart[] = toDeltas(calls);
      // Text and tool calls in one chunk (rare): the text first.
      const text = choice.delta?.content;
      if (text) deltas.unshift({ type: 'text', text });
      return deltas;
    }
    return choice.delta?.content ?? choice.text ?? undefined;
  }

  outcome(): { usage: ReportedUsage; finishReason: FinishReason } | undefined {
    if (!this.ended && !this.finish) return undefined;
    return { usage: toUsage(this.usage), finishReason: mapOpenAIFinish(this.finish) };
  }
}

/** Our message in OpenAI's wire format: assistant `tool_calls` (content null when there is no text), `tool` with `tool_call_id`. */
function toWireMessage(m: ChatMessage): Record<string, unknown> {
  if (m.toolCalls?.length) {
    return { role: m.role, content: m.content === '' ? null : m.content, tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) };
  }
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
  return { role: m.role, content: m.content };
}

/** tools, tool_choice, parallel_tool_calls and response_format, under OpenAI's names (passed through as the client sent them). */
function addConversation(body: Record<string, unknown>, o: ConversationOptions): void {
  if (o.tools) {
    body.tools = o.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), ...(t.parameters !== undefined ? { parameters: t.parameters } : {}), ...(t.strict !== undefined ? { strict: t.strict } : {}) },
    }));
    if (o.toolChoice !== undefined) body.tool_choice = typeof o.toolChoice === 'string' ? o.toolChoice : { type: 'function', function: { name: o.toolChoice.name } };
    if (o.parallelToolCalls !== undefined) body.parallel_tool_calls = o.parallelToolCalls;
  }
  const f = o.responseFormat;
  if (f?.type === 'json_schema') {
    body.response_format = { type: 'json_schema', json_schema: { name: f.name, ...(f.description !== undefined ? { description: f.description } : {}), ...(f.schema !== undefined ? { schema: f.schema } : {}), ...(f.strict !== undefined ? { strict: f.strict } : {}) } };
  } else if (f) {
    body.response_format = { type: f.type };
  }
}

export function createOpenAIProvider(options: OpenAIProviderOptions): ModelProvider {
  const url = openAIEndpoint(options.baseUrl);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  // Local servers (Ollama, llama.cpp) need no key; sending "Bearer " would confuse some proxies.
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

  const completionsUrl = openAICompletionsEndpoint(options.baseUrl);
  const spec = (o: ModelCallOptions, stream: boolean): CallSpec => {
    // Fill-in-the-middle and raw completions go to the legacy completions endpoint (Ollama, llama.cpp server, vLLM,
    // DeepSeek, …), the prompt being the last user message, unchanged: an editor's own FIM template stays as it wrote it.
    const fim = o.suffix !== undefined || o.rawPrompt === true;
    const body: Record<string, unknown> = fim
      ? { model: o.model, prompt: [...o.messages].reverse().find((m) => m.role === 'user')?.content ?? '', ...(o.suffix !== undefined ? { suffix: o.suffix } : {}) }
      : { model: o.model, messages: o.messages.map(toWireMessage) };
    // max_tokens rather than max_completion_tokens: it is what vLLM, Ollama,
    // llama.cpp and LM Studio understand, and OpenAI still accepts it for chat models.
    if (o.maxTokens !== undefined) body.max_tokens = o.maxTokens;
    if (o.temperature !== undefined) body.temperature = o.temperature;
    if (o.topP !== undefined) body.top_p = o.topP;
    if (o.stop?.length) body.stop = o.stop;
    if (!fim && (o.tools !== undefined || o.responseFormat !== undefined)) addConversation(body, o);
    if (stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    // The shared headers object unless the call is traced (only then one copy, with its traceparent).
    return { url: fim ? completionsUrl : url, headers: o.traceparent ? { ...headers, traceparent: o.traceparent } : headers, body };
  };

  return httpProvider(options, { name: 'openai', conversation: { tools: true, responseFormats: ['json_object', 'json_schema'] }, spec, decoder: () => new OpenAIDecoder(options.apiKey), parse: parseCompletion });
}
