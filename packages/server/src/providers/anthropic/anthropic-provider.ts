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
import type { FinishReason, GenerateOutput, ModelCallOptions, ModelProvider, ReportedUsage } from '../provider.js';
import { ProviderError } from '../../errors.js';
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
    default:
      return 'other'; // tool_use, pause_turn
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
  content?: Array<{ type: string; text?: string }>;
  stop_reason?: string | null;
  usage?: WireUsage;
}

function parseMessage(json: unknown): GenerateOutput {
  const msg = json as Message;
  if (!msg || !Array.isArray(msg.content)) throw new ProviderError('upstream_error', 'the provider sent a response without content', false);
  const text = msg.content.map((b) => (b.type === 'text' ? (b.text ?? '') : '')).join('');
  return {
    text,
    usage: toUsage(msg.usage),
    finishReason: mapAnthropicStop(msg.stop_reason),
  };
}

/** message_start carries input usage; message_delta the cumulative output tokens and stop reason; message_stop ends it. */
class AnthropicDecoder implements StreamDecoder {
  ended = false;
  private usage: ReportedUsage = {};
  private stop: string | null | undefined;

  constructor(private readonly apiKey: string) {}

  onEvent(event: SseEvent): string | undefined {
    switch (event.event) {
      case 'content_block_delta': {
        const delta = (JSON.parse(event.data) as { delta?: { type?: string; text?: string } }).delta;
        return delta?.type === 'text_delta' ? delta.text : undefined;
      }
      case 'message_start': {
        const usage = (JSON.parse(event.data) as { message?: { usage?: WireUsage } }).message?.usage;
        this.usage = toUsage(usage);
        return undefined;
      }
      case 'message_delta': {
        const body = JSON.parse(event.data) as { delta?: { stop_reason?: string | null }; usage?: WireUsage };
        if (body.delta?.stop_reason) this.stop = body.delta.stop_reason;
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

  outcome(): { usage: ReportedUsage; finishReason: FinishReason } | undefined {
    return this.ended ? { usage: { ...this.usage }, finishReason: mapAnthropicStop(this.stop) } : undefined;
  }
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
    const body: Record<string, unknown> = {
      model: o.model,
      max_tokens: o.maxTokens ?? options.defaultMaxTokens ?? 4096,
      messages: o.messages.filter((m) => m.role !== 'system').map((m) => ({ role: m.role, content: m.content })),
    };
    if (system.length > 0) body.system = system.join('\n\n');
    if (o.temperature !== undefined) body.temperature = o.temperature;
    if (o.topP !== undefined) body.top_p = o.topP;
    if (o.stop?.length) body.stop_sequences = o.stop;
    if (stream) body.stream = true;
    return { url, headers, body };
  };

  return httpProvider(options, { name: 'anthropic', spec, decoder: () => new AnthropicDecoder(options.apiKey), parse: parseMessage });
}
