import { CancelledError, ProviderError } from '../../errors.js';
import type { SpendSubject, TokenReservation, TokenSpend } from '../../limits/token-spend.js';
import { outputCap, type RegisteredModel } from '../../providers/model-registry.js';
import { costMicros } from '../../config/model-prices.js';
import { candidatesFor, shouldFallBack } from '../../providers/model-fallbacks.js';
import type { ChatMessage, FinishReason, ModelCallOptions, ReportedUsage, ToolCall, ToolCallDelta, Usage } from '../../providers/provider.js';
import { conversationBytes, toolPartBytes, ToolCallAssembler, type ConversationOptions } from '../../providers/conversation.js';
import type { CallOrigin } from '../../plugins/tracing.js';

/**
 * One model call: who pays, which model, what it is told, and where the text goes as it arrives. Tools, tool
 * choice and response format (ConversationOptions) are absent unless the caller sent them.
 */
export interface ModelCall extends ConversationOptions {
  subject: SpendSubject;
  model: RegisteredModel;
  messages: ChatMessage[];
  /**
   * The request's max_tokens; absent → the model's output cap. Sent upstream either way, and enforced here
   * too (an answer that goes on past it is cut, `finish_reason: "length"`), so the reservation bounds it.
   */
  maxTokens?: number | undefined;
  temperature?: number | undefined;
  topP?: number | undefined;
  /** Only for models whose provider takes it (`topK`), else 400 naming `top_k`. */
  topK?: number | undefined;
  stop?: string[] | undefined;
  /** Fill-in-the-middle (the prompt is the last user message); only models whose provider has `fillInMiddle`, else 400. */
  suffix?: string | undefined;
  /** A raw completion: the last user message is a prompt to continue unchanged (ModelCallOptions.rawPrompt). */
  rawPrompt?: boolean | undefined;
  hints?: ModelCallOptions['hints'];
  signal?: AbortSignal | undefined;
  /** Each piece of text as it arrives; a returned promise holds back the next piece (backpressure). */
  onText?: ((text: string) => void | Promise<void>) | undefined;
  /** Each piece of a tool call as it arrives (index, id and name on a call's first piece, a fragment of its arguments); a returned promise holds back the next piece. */
  onToolCall?: ((delta: ToolCallDelta) => void | Promise<void>) | undefined;
  /** Held already by `reserveModelCall(spend, call)` (so a refusal can still be a plain 429); otherwise the call reserves first. */
  reservation?: TokenReservation | undefined;
  /** Told which model an attempt goes to, before it starts (the asked one, then each fallback tried). */
  onAttempt?: ((model: RegisteredModel) => void) | undefined;
  /** Told the tokens charged (and their cost in integer micro-dollars) once the call has settled, whether it succeeded, failed or was aborted. */
  onSettled?: ((tokens: number, costMicros: number) => void) | undefined;
  /**
   * For a caller that stores a record of a successful call right after it (POST /generate): the call
   * returns without waiting for its settle and usage row, and `result.committed` resolves once both are
   * done, so the usage row and the caller's own row go out in one group commit. The caller must await
   * `committed` before it answers. A failed call still waits for both before it throws.
   */
  deferCommit?: boolean | undefined;
  /** Where the call comes from (route, request id, trace parent): the request log, metrics and traces name it. */
  origin?: CallOrigin | undefined;
}

export interface ModelCallResult {
  text: string;
  /** The tool calls the model made, whole (finish reason `tool-calls`); absent when it made none. */
  toolCalls?: ToolCall[];
  /** What the call is charged: the provider's counts, or Codeloom's own where the provider reported none (see callModel). */
  usage: Usage;
  finishReason: FinishReason;
  /** The stop sequence that ended the answer, when the provider says which (finish reason `stop`). */
  stopSequence?: string;
  /** prompt + completion tokens, as settled. */
  tokens: number;
  /** What the call cost in integer micro-dollars: its settled usage at the serving model's price (config/model-prices.ts). */
  costMicros: number;
  /** The model that served: the one asked for, or a fallback it names (providers/model-fallbacks.ts). */
  model: RegisteredModel;
  /** Milliseconds spent waiting on the provider (every attempt), for Server-Timing. */
  upstreamMs: number;
  /** Resolves once the call is settled and its usage recorded (already so unless the call had `deferCommit`). */
  committed: Promise<void>;
}

/** Told of every model call once it settles (usage accounting), whatever its outcome. */
export interface UsageMeter {
  record(entry: UsageEntry): void | Promise<void>;
  /** Told as a call starts (its trace span opens); what it returns comes back in the entry's `detail.watch`. */
  begin?(call: ModelCall): CallWatch | undefined;
}

/** What a meter keeps of a call while it runs: with tracing on, the call's span and its `traceparent` for the upstream. */
export interface CallWatch {
  traceparent?: string;
}

/** How a call went, beyond its usage: for the request log, metrics and traces (observability/call-observer.ts). */
export interface CallDetail {
  origin: CallOrigin | undefined;
  /** The model asked for (a fallback may have served). */
  requested: RegisteredModel;
  served: RegisteredModel;
  /** The deployment that served (providers/routing/), when the model is served by deployments. */
  deployment: string | undefined;
  /** Epoch milliseconds of the call's start. */
  startedAt: number;
  /** Start → first upstream attempt (reservation), start → first piece, start → settled. */
  queuedMs: number;
  ttftMs: number | undefined;
  latencyMs: number;
  /** Whether the caller took the answer piece by piece. */
  stream: boolean;
  finishReason: FinishReason | undefined;
  /** What the call failed with (its code and status name the log row). */
  error: unknown;
  messages: readonly ChatMessage[];
  /** The answer's pieces as they came (joined only when bodies are logged). */
  pieces: readonly string[];
  watch: CallWatch | undefined;
}

/** One settled model call, as usage accounting counts it. */
export interface UsageEntry {
  subject: SpendSubject;
  /** The model that served (or last failed). */
  model: string;
  promptTokens: number;
  completionTokens: number;
  /** The call's cost in integer micro-dollars (0 for a model without a price). */
  costMicros: number;
  outcome: 'succeeded' | 'failed' | 'cancelled';
  /** Set by callModel: how the call went (timings, origin, fallback, error). */
  detail?: CallDetail;
}

/** Chat-format tokens of a message beyond its text (role markers, separators). */
const MESSAGE_OVERHEAD = 8;
/** Chat-format tokens of a call beyond its messages (the start of the reply, a begin-of-text token, a template's short preamble). */
const CALL_OVERHEAD = 32;

/**
 * An upper bound of a prompt's tokens, known before the provider has counted them: the UTF-8 bytes of every
 * message, plus MESSAGE_OVERHEAD per message and CALL_OVERHEAD per call for the chat format. Byte-level BPE
 * tokenizers (OpenAI's, Llama 3, Qwen, Mistral's Tekken) and SentencePiece with byte fallback never make more
 * tokens of a text than it has bytes, whatever the script (CJK, emoji, random strings): every token covers at
 * least one byte. It is high for English (about four bytes a token), which only means a call holds more of
 * its window while it runs: the settle gives back what was not used.
 */
export function promptTokenBound(messages: readonly ChatMessage[], suffix?: string, conversation?: ConversationOptions): number {
  let n = CALL_OVERHEAD;
  for (const m of messages) {
    n += MESSAGE_OVERHEAD + Buffer.byteLength(m.content, 'utf8');
    // Tool calls and tool results: their ids, names and arguments are prompt too (providers/conversation.ts).
    if (m.toolCalls !== undefined || m.toolCallId !== undefined) n += toolPartBytes(m);
  }
  if (suffix) n += MESSAGE_OVERHEAD + Buffer.byteLength(suffix, 'utf8');
  // Tool definitions and a response schema go to the model as prompt (one JSON text each).
  if (conversation && (conversation.tools !== undefined || conversation.responseFormat !== undefined)) n += conversationBytes(conversation);
  return n;
}

/** What the provider is asked: the call's options with its output cap always set (a fallback keeps the asked model's cap: that is what was reserved). */
function providerOptions(call: ModelCall, served: RegisteredModel = call.model): ModelCallOptions {
  const options: ModelCallOptions = { model: served.upstreamId, messages: call.messages, maxTokens: outputCap(call.model, call.maxTokens) };
  if (call.temperature !== undefined) options.temperature = call.temperature;
  if (call.topP !== undefined) options.topP = call.topP;
  if (call.topK !== undefined) options.topK = call.topK;
  if (call.stop?.length) options.stop = call.stop;
  if (call.suffix !== undefined) options.suffix = call.suffix;
  if (call.rawPrompt) options.rawPrompt = true;
  if (call.tools !== undefined) options.tools = call.tools;
  if (call.toolChoice !== undefined) options.toolChoice = call.toolChoice;
  if (call.parallelToolCalls !== undefined) options.parallelToolCalls = call.parallelToolCalls;
  if (call.responseFormat !== undefined) options.responseFormat = call.responseFormat;
  if (call.hints) options.hints = call.hints;
  if (call.signal) options.signal = call.signal;
  return options;
}

/**
 * The most tokens a call may use: the bound of its prompt plus its output cap, or exactly what a provider
 * that knows in advance (the sandbox) says the call will use.
 */
export function tokensToReserve(call: ModelCall): number {
  const parts = reservationOf(call);
  return parts.prompt + parts.output;
}

/**
 * The most each model that may serve a call (the one asked for, then its fallbacks) would use: exactly what a
 * provider that knows in advance (the sandbox) plans, else the bound of the prompt plus the output cap. A run's
 * ceilings (modules/runs/run-ceilings.ts) size a step's output cap from these, as the reservation does.
 */
export function candidateUses(call: ModelCall): Array<{ model: RegisteredModel; prompt: number; output: number }> {
  const cap = outputCap(call.model, call.maxTokens);
  let bound: number | undefined;
  return candidatesFor(call).map((model) => {
    const planned = model.provider.plannedUsage?.(providerOptions(call, model));
    return planned ? { model, prompt: planned.promptTokens, output: planned.completionTokens } : { model, prompt: bound ??= promptTokenBound(call.messages, call.suffix, call), output: cap };
  });
}

/** The reservation of a call: its prompt and output parts (the words of a refusal name both), and its most cost in micro-dollars. */
function reservationOf(call: ModelCall): { prompt: number; output: number; costMicros: number } {
  // With fallbacks, enough for whichever of them ends up serving (each at its own price).
  let most = { prompt: 0, output: 0 };
  let mostCost = 0;
  for (const { model, ...next } of candidateUses(call)) {
    if (next.prompt + next.output > most.prompt + most.output) most = next;
    if (model.price) mostCost = Math.max(mostCost, costMicros(model.price, { promptTokens: next.prompt, completionTokens: next.output }));
  }
  return { ...most, costMicros: mostCost };
}

/**
 * Holds a call's most tokens (and most cost, from the dollar budgets that apply) from the subject's windows,
 * or throws holding nothing: 429 `rate_limited` with Retry-After, 429 `budget_exceeded`, or 400
 * `request_too_large` when it can never fit.
 */
export function reserveModelCall(spend: TokenSpend, call: ModelCall): Promise<TokenReservation> {
  const { prompt, output, costMicros: cost } = reservationOf(call);
  return spend.reserve(call.subject, prompt + output, { prompt, output }, cost);
}

/** The prompt tokens Codeloom counts for a call its provider reported none of: the sandbox's exact count, else the prompt's bound. */
function countedPrompt(call: ModelCall, served: RegisteredModel): number {
  return served.provider.plannedUsage?.(providerOptions(call, served)).promptTokens ?? promptTokenBound(call.messages, call.suffix, call);
}

/**
 * A call's prompt tokens as Codeloom counts them before making it (Anthropic's count_tokens): exact for a
 * provider that knows in advance (the sandbox), else the bound the reservation holds (an upper bound).
 */
export function countPromptTokens(call: ModelCall): { tokens: number; exact: boolean } {
  const planned = call.model.provider.plannedUsage?.(providerOptions(call));
  return planned ? { tokens: planned.promptTokens, exact: true } : { tokens: promptTokenBound(call.messages, call.suffix, call), exact: false };
}

/**
 * The one streaming model-call loop (POST /generate as JSON or SSE, channel generations, run steps, the
 * OpenAI-compatible routes): reserve → stream upstream, aborting when `signal` fires, and cutting the answer
 * at its output cap → settle to what was used. The charge is the provider's count where it reported one,
 * else Codeloom's own: for the prompt, the sandbox's exact count or the prompt's bound; for the answer, the
 * pieces received (a provider sends at least one token per piece). A call cut at its cap, failed or
 * aborted has no report, so it is charged the counted figures.
 * Provider failures come out as the provider's ProviderError (502/503/504), an abort as CancelledError.
 */
export async function callModel(spend: TokenSpend, call: ModelCall, meter?: UsageMeter): Promise<ModelCallResult> {
  const startedAt = Date.now();
  const t0 = performance.now();
  const candidates = candidatesFor(call);
  const reservation = call.reservation ?? await reserveModelCall(spend, call);
  if (call.signal?.aborted) {
    await reservation.release();
    throw new CancelledError();
  }
  const watch = meter?.begin?.(call);
  const cap = outputCap(call.model, call.maxTokens);
  const pieces: string[] = [];
  // Tool calls, assembled as their pieces arrive (created on the first); each piece counts as output like a text piece.
  let tools: ToolCallAssembler | undefined;
  let toolPieces = 0;
  let reported: ReportedUsage | undefined;
  let finished = false;
  let finishReason: FinishReason = 'stop';
  let stopSequence: string | undefined;
  let usage!: Usage;
  let spent = 0;
  let cost = 0;
  let served = candidates[0]!;
  let servedPrice: RegisteredModel['price'];
  let servedDeployment: string | undefined;
  let upstreamMs = 0;
  let outcome: 'succeeded' | 'failed' | 'cancelled' = 'failed';
  let committed!: Promise<void>;
  let queuedMs = -1;
  let firstAt = 0;
  let failure: unknown;
  try {
    for (let i = 0; ; i++) {
      served = candidates[i]!;
      call.onAttempt?.(served);
      const started = performance.now();
      if (queuedMs < 0) queuedMs = started - t0;
      const options = providerOptions(call, served);
      if (watch?.traceparent) options.traceparent = watch.traceparent;
      // A model served by deployments names the one that serves, and its price (providers/routing/).
      servedPrice = undefined;
      servedDeployment = undefined;
      options.onRoute = (deployment, price) => { servedPrice = price; servedDeployment = deployment; };
      try {
        for await (const part of served.provider.stream(options)) {
          if (firstAt === 0 && part.type !== 'finish') firstAt = performance.now();
          if (part.type === 'text') {
            // More than the cap: the provider ignored max_tokens. Leaving the loop ends the upstream request.
            if (pieces.length + toolPieces >= cap) {
              finished = true;
              finishReason = 'length';
              break;
            }
            pieces.push(part.text);
            // Await only a real hold-back: awaiting a plain return value still costs a turn per token.
            const held = call.onText?.(part.text);
            if (held) await held;
          } else if (part.type === 'tool-call') {
            if (pieces.length + toolPieces >= cap) {
              finished = true;
              finishReason = 'length';
              break;
            }
            toolPieces++;
            (tools ??= new ToolCallAssembler()).add(part);
            const held = call.onToolCall?.(part);
            if (held) await held;
          } else {
            finished = true;
            reported = part.usage;
            finishReason = part.finishReason;
            stopSequence = part.stopSequence;
          }
        }
        break;
      } catch (error) {
        // Before the first piece of output the next model may serve; after it, never (the caller has text).
        if (pieces.length + toolPieces > 0 || i + 1 >= candidates.length || call.signal?.aborted || !shouldFallBack(error)) throw error;
      } finally {
        upstreamMs += performance.now() - started;
      }
    }
    if (!finished) throw new ProviderError('upstream_error', 'The provider ended the response without reporting completion.', false);
    outcome = 'succeeded';
  } catch (error) {
    const mapped = asCallError(error, call.signal);
    if (mapped instanceof CancelledError) outcome = 'cancelled';
    failure = mapped;
    throw mapped;
  } finally {
    // Tokens spent are charged whether or not the caller stayed to read them; what the provider did not
    // report is counted here (the prompt's count is worked out only then).
    usage = {
      promptTokens: reported?.promptTokens ?? countedPrompt(call, served),
      completionTokens: reported?.completionTokens ?? pieces.length + toolPieces,
    };
    spent = usage.promptTokens + usage.completionTokens;
    // Priced at the model that served (a fallback has its own price). No provider reports cached prompt tokens yet, so all are `input`.
    cost = costMicros(servedPrice ?? served.price, usage);
    const detail: CallDetail | undefined = meter && {
      origin: call.origin, requested: call.model, served, deployment: servedDeployment, startedAt, queuedMs: Math.max(0, queuedMs), ttftMs: firstAt ? firstAt - t0 : undefined,
      latencyMs: performance.now() - t0, stream: call.onText !== undefined || call.onToolCall !== undefined, finishReason: outcome === 'succeeded' ? finishReason : undefined,
      error: failure, messages: call.messages, pieces, watch,
    };
    committed = settleAndRecord(reservation, spent, cost, call, meter && { subject: call.subject, model: served.id, outcome, ...usage, costMicros: cost, detail }, meter);
    if (outcome !== 'succeeded' || !call.deferCommit) await committed;
    // The caller awaits it; until then a failure must not count as unhandled.
    else committed.catch(() => {});
  }
  const result: ModelCallResult = { text: pieces.join(''), usage, finishReason, tokens: spent, costMicros: cost, model: served, upstreamMs, committed };
  if (tools) result.toolCalls = tools.result();
  if (stopSequence !== undefined && finishReason === 'stop') result.stopSequence = stopSequence;
  return result;
}

/** The settle and the usage row of a call, started together (the row joins the next group commit at once). */
async function settleAndRecord(reservation: TokenReservation, spent: number, cost: number, call: ModelCall, entry: UsageEntry | undefined, meter: UsageMeter | undefined): Promise<void> {
  const recorded = entry && meter!.record(entry);
  // Marked handled now: a usage write that fails while the settle is pending must not be an unhandled rejection
  // (that ends a Node process); `await recorded` below still throws its error to the caller.
  recorded?.catch(() => {});
  await reservation.settle(spent, cost);
  call.onSettled?.(spent, cost);
  await recorded;
}

/** What the caller is told: an abort (the caller's, or one the provider reports) is the one CancelledError; anything else as thrown. */
function asCallError(error: unknown, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted || error instanceof CancelledError) return new CancelledError();
  return error;
}
