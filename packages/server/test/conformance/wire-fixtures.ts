/**
 * The recorded wire transcripts of each vendor (fixtures/), grouped into the
 * situations the provider conformance cases replay, with what a provider
 * must make of each. The recordings follow the vendors' documented formats:
 *
 * OpenAI chat completions — a pretty-printed `chat.completion` JSON; a stream
 * of `data:` chunks (a role chunk, content deltas, a chunk with the
 * finish_reason, usage only in a last chunk whose `choices` is empty and
 * `"usage": null` on all the others, then `data: [DONE]`); errors as
 * `{"error": {message, type, param, code}}`; a mid-stream error as
 * OpenRouter sends it (a keep-alive comment first, then a chunk carrying
 * `error` and finish_reason "error", then the end of the body).
 *
 * Anthropic Messages — `message` JSON; a stream of named events
 * (message_start with the input usage, content_block_start, `ping`s,
 * content_block_delta text_delta…, content_block_stop, message_delta with
 * the stop reason and the cumulative output tokens, message_stop); errors as
 * `{"type": "error", "error": {type, message}, "request_id"}`, 529 for
 * overloaded, and an `event: error` mid-stream.
 *
 * `*-crlf.sse` are the same streams with CRLF line ends; `*-truncated.sse`
 * stop mid-answer without the vendor's end marker; `*.http` are whole
 * responses (status line, headers, body).
 */
import type { FinishReason, Usage } from '../../src/providers/provider.js';
import type { Scenario } from './fixture-server.js';

export interface Outcome {
  text: string;
  usage: Usage;
  finishReason: FinishReason;
}

export type ScenarioName =
  | 'answer' | 'length' | 'stopped' | 'crlf' | 'truncated' | 'midStreamError'
  | 'rateLimited' | 'serverError' | 'overloaded' | 'badRequest' | 'unauthorized';

export interface VendorWire {
  vendor: string;
  /** The model id the calls name. */
  model: string;
  apiKey: string;
  /** The path every call must go to. */
  path: string;
  scenarios: Record<ScenarioName, Scenario>;
  /** What generate and stream must make of `answer`, `length` (called with maxTokens 5) and `stopped` (called with STOP). */
  expected: Record<'answer' | 'length' | 'stopped', Outcome>;
  /** The text a stream delivers before `truncated` breaks off. */
  truncatedText: string;
  /** The text before the mid-stream error, and the HTTP status that error maps to (per its type, when the vendor says one). */
  midStreamError: { text: string; status: number };
  /** The upstream status of the `overloaded` recording. */
  overloadedStatus: number;
  /** Part of the vendor's message in `badRequest`, which the error detail passes on. */
  badRequestSays: string;
  /** What the provider asked for, read from the request body in the vendor's own fields. */
  sent(body: any): { maxTokens?: number; stop?: string[]; stream?: boolean };
  /** The API key as the request carried it. */
  keyOf(headers: Record<string, unknown>): string | undefined;
}

/** The stop sequence the `stopped` scenario is called with. */
export const STOP = ['\nif __name__'];

const GREETING = 'def greet(name):\n    return f"Héllo, {name} ✓"\n';
const CUT_AT_5_TOKENS = 'def greet(name):\n   ';

export const openAIWire: VendorWire = {
  vendor: 'OpenAI',
  model: 'gpt-4o-mini',
  apiKey: 'sk-proj-conformance-0123456789abcdef',
  path: '/v1/chat/completions',
  scenarios: {
    answer: { json: 'openai-chat.json', sse: 'openai-chat-stream.sse' },
    length: { json: 'openai-chat-length.json', sse: 'openai-chat-stream-length.sse' },
    // OpenAI says "stop" for a stop sequence as for a natural end.
    stopped: { json: 'openai-chat.json', sse: 'openai-chat-stream.sse' },
    crlf: { sse: 'openai-chat-stream-crlf.sse' },
    truncated: { sse: 'openai-chat-stream-truncated.sse' },
    midStreamError: { sse: 'openai-chat-stream-midstream-error.sse' },
    rateLimited: { http: 'openai-error-429.http' },
    serverError: { http: 'openai-error-500.http' },
    overloaded: { http: 'openai-error-503.http' },
    badRequest: { http: 'openai-error-400.http' },
    unauthorized: { http: 'openai-error-401.http' },
  },
  expected: {
    answer: { text: GREETING, usage: { promptTokens: 24, completionTokens: 16 }, finishReason: 'stop' },
    length: { text: CUT_AT_5_TOKENS, usage: { promptTokens: 24, completionTokens: 5 }, finishReason: 'length' },
    stopped: { text: GREETING, usage: { promptTokens: 24, completionTokens: 16 }, finishReason: 'stop' },
  },
  truncatedText: 'def greet(name):\n    return',
  midStreamError: { text: 'def greet(name):\n', status: 502 },
  overloadedStatus: 503,
  badRequestSays: 'maximum context length is 128000 tokens',
  sent: (body) => ({ maxTokens: body?.max_tokens, stop: body?.stop, stream: body?.stream }),
  keyOf: (headers) => String(headers.authorization ?? '').replace(/^Bearer /, '') || undefined,
};

export const anthropicWire: VendorWire = {
  vendor: 'Anthropic',
  model: 'claude-sonnet-4-5',
  apiKey: 'sk-ant-api03-conformance-0123456789abcdef',
  path: '/v1/messages',
  scenarios: {
    answer: { json: 'anthropic-messages.json', sse: 'anthropic-messages-stream.sse' },
    length: { json: 'anthropic-messages-length.json', sse: 'anthropic-messages-stream-length.sse' },
    stopped: { json: 'anthropic-messages-stop-sequence.json', sse: 'anthropic-messages-stream-stop-sequence.sse' },
    crlf: { sse: 'anthropic-messages-stream-crlf.sse' },
    truncated: { sse: 'anthropic-messages-stream-truncated.sse' },
    midStreamError: { sse: 'anthropic-messages-stream-midstream-error.sse' },
    rateLimited: { http: 'anthropic-error-429.http' },
    serverError: { http: 'anthropic-error-500.http' },
    overloaded: { http: 'anthropic-error-529.http' },
    badRequest: { http: 'anthropic-error-400.http' },
    unauthorized: { http: 'anthropic-error-401.http' },
  },
  expected: {
    // Prompt tokens from message_start; output tokens from message_delta (message_start says 1).
    answer: { text: GREETING, usage: { promptTokens: 31, completionTokens: 16 }, finishReason: 'stop' },
    length: { text: CUT_AT_5_TOKENS, usage: { promptTokens: 31, completionTokens: 5 }, finishReason: 'length' },
    stopped: { text: GREETING.trimEnd(), usage: { promptTokens: 31, completionTokens: 15 }, finishReason: 'stop' },
  },
  truncatedText: 'def greet(name):\n    return f"Héllo,',
  // An overloaded_error event: overloaded, like HTTP 529.
  midStreamError: { text: 'def greet(name):\n    return f"Héllo,', status: 503 },
  overloadedStatus: 529,
  badRequestSays: 'max_tokens: 100000 > 64000',
  sent: (body) => ({ maxTokens: body?.max_tokens, stop: body?.stop_sequences, stream: body?.stream }),
  keyOf: (headers) => (headers['x-api-key'] as string | undefined) || undefined,
};
