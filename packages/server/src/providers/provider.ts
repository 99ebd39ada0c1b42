/**
 * The one interface every model back-end implements. Deliberately small
 * (compare vercel/ai's LanguageModelV3): a call either returns the whole
 * text or streams it, always honours an AbortSignal, and reports the token
 * usage its upstream counted (what it did not count is absent) and why it stopped. Failures are thrown as ProviderError
 * (errors/provider-error.ts); an aborted call rejects with CancelledError.
 */

import type { ModelPrice } from '../config/model-prices.js';
import type { ChatMessage, ConversationCapabilities, ConversationOptions, ToolCall, ToolCallDelta } from './conversation.js';

export type { ChatMessage, ToolCall, ToolCallDelta } from './conversation.js';

/** Tools, tool choice and response format (providers/conversation.ts) are absent unless the caller sent them. */
export interface ModelCallOptions extends ConversationOptions {
  /** Provider-level model id (what the upstream calls it). */
  model: string;
  messages: ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  /** Sample from the k likeliest tokens; only for providers with `topK`. */
  topK?: number;
  /** Stop sequences: the answer ends before the first one (which is not part of it). */
  stop?: string[];
  /** Fill-in-the-middle: the text after the insertion point (the prompt is the last user message); only for providers with `fillInMiddle`. */
  suffix?: string;
  /**
   * A raw completion (POST /openai/v1/completions): the last user message is a prompt to continue as it is
   * (an editor's own fill-in-the-middle template, say). An OpenAI-compatible provider sends it unchanged to
   * its server's /v1/completions; the others read it as a user message.
   */
  rawPrompt?: boolean;
  /** Hints the sandbox model uses to shape its output; real models see them in the prompt. */
  hints?: {
    language?: string;
    context?: Record<string, string | number | boolean>;
    /** Agent type when called from a workflow step (planner, architect, coder, reviewer, tester, documenter). */
    agentType?: string;
  };
  signal?: AbortSignal;
  /** Told which deployment serves the call and at what price, by a model served by deployments (providers/routing/routed-provider.ts): the call is charged at it. */
  onRoute?: (deploymentId: string, price: ModelPrice) => void;
  /** W3C `traceparent` of the call's span, sent upstream as a header by the HTTP providers (tracing on only). */
  traceparent?: string;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

/**
 * Token counts as a provider reported them. A count the upstream did not send (an OpenAI-compatible server
 * without a usage chunk, say) is absent, never 0: the model call then charges Codeloom's own count
 * (modules/generate/model-call.ts).
 */
export type ReportedUsage = Partial<Usage>;

export type FinishReason = 'stop' | 'length' | 'tool-calls' | 'content-filter' | 'error' | 'other';

export interface GenerateOutput {
  text: string;
  usage: ReportedUsage;
  finishReason: FinishReason;
  /** The calls the model made (finish reason `tool-calls`). */
  toolCalls?: ToolCall[];
}

/** Stream parts, in order: any number of `text` and `tool-call` parts, then exactly one `finish`. Failures are thrown from the iterator. */
export type StreamPart =
  | { type: 'text'; text: string }
  | ToolCallDelta
  | { type: 'finish'; usage: ReportedUsage; finishReason: FinishReason; /** The stop sequence that ended the answer, when the provider knows which. */ stopSequence?: string };

export interface ModelProvider {
  /** Provider name: sandbox, openai, anthropic, llama. */
  readonly name: string;
  generate(options: ModelCallOptions): Promise<GenerateOutput>;
  stream(options: ModelCallOptions): AsyncIterable<StreamPart>;
  /** Takes `suffix` (fill-in-the-middle completions); a call with a suffix to any other provider is refused with 400. */
  readonly fillInMiddle?: boolean;
  /** Takes `topK` (Anthropic's top_k); a call with it to any other provider is refused with 400 naming `top_k`. */
  readonly topK?: boolean;
  /** Tools and response formats it honours (providers/conversation.ts); absent: text only, and a call with them is a 400 naming the field. */
  readonly conversation?: ConversationCapabilities;
  /** What a call will use, for a provider that knows before running it (the deterministic sandbox): its tokens are reserved exactly. */
  plannedUsage?(options: ModelCallOptions): Usage;
  /** Release sockets, threads, model memory. */
  close?(): Promise<void>;
}
