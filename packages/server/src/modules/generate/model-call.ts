import { CancelledError, ProviderError } from '../../errors.js';
import type { SpendSubject, TokenReservation, TokenSpend } from '../../limits/token-spend.js';
import { outputCap, type RegisteredModel } from '../../providers/model-registry.js';
import { candidatesFor, shouldFallBack } from '../../providers/model-fallbacks.js';
import type { ChatMessage, FinishReason, ModelCallOptions, Usage } from '../../providers/provider.js';

/** One model call: who pays, which model, what it is told, and where the text goes as it arrives. */
export interface ModelCall {
  subject: SpendSubject;
  model: RegisteredModel;
  messages: ChatMessage[];
  /** The request's max_tokens; absent → the model's output cap (sent upstream either way, so the reservation bounds the answer). */
  maxTokens?: number | undefined;
  temperature?: number | undefined;
  topP?: number | undefined;
  stop?: string[] | undefined;
  /** Fill-in-the-middle (the prompt is the last user message); only models whose provider has `fillInMiddle`, else 400. */
  suffix?: string | undefined;
  hints?: ModelCallOptions['hints'];
  signal?: AbortSignal | undefined;
  /** Each piece of text as it arrives; a returned promise holds back the next piece (backpressure). */
  onText?: ((text: string) => void | Promise<void>) | undefined;
  /** Held already by `reserveModelCall(spend, call)` (so a refusal can still be a plain 429); otherwise the call reserves first. */
  reservation?: TokenReservation | undefined;
  /** Told which model an attempt goes to, before it starts (the asked one, then each fallback tried). */
  onAttempt?: ((model: RegisteredModel) => void) | undefined;
  /** Told the tokens charged once the call has settled, whether it succeeded, failed or was aborted. */
  onSettled?: ((tokens: number) => void) | undefined;
  /**
   * For a caller that stores a record of a successful call right after it (POST /generate): the call
   * returns without waiting for its settle and usage row, and `result.committed` resolves once both are
   * done, so the usage row and the caller's own row go out in one group commit. The caller must await
   * `committed` before it answers. A failed call still waits for both before it throws.
   */
  deferCommit?: boolean | undefined;
}

export interface ModelCallResult {
  text: string;
  usage: Usage;
  finishReason: FinishReason;
  /** prompt + completion tokens, as settled. */
  tokens: number;
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
}

/** One settled model call, as usage accounting counts it. */
export interface UsageEntry {
  subject: SpendSubject;
  /** The model that served (or last failed). */
  model: string;
  promptTokens: number;
  completionTokens: number;
  outcome: 'succeeded' | 'failed' | 'cancelled';
}

/** Word, number (up to three digits), punctuation mark, newline or run of blanks: BPE tokenizers never merge across these. */
const PIECE = / ?[\p{L}\p{M}]+| ?\p{N}{1,3}| ?[^\s\p{L}\p{M}\p{N}]|\r?\n|[ \t]+|[\s\S]/gu;

/**
 * A prompt's tokens before the provider has counted them, on the high side: every word, number or
 * punctuation mark at least one token and a long word one per four bytes, plus eight per message for the
 * chat format. (Not a hard bound for every tokenizer; a settle above the reservation is still capped.)
 */
export function estimatePromptTokens(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages) n += messageEstimate(m);
  return n;
}

/** System prompts repeat from call to call (one per language and context): their estimates are kept. */
const systemEstimates = new Map<string, number>();

function messageEstimate(m: ChatMessage): number {
  if (m.role !== 'system') return 8 + textEstimate(m.content);
  let n = systemEstimates.get(m.content);
  if (n === undefined) {
    n = 8 + textEstimate(m.content);
    if (systemEstimates.size >= 256) systemEstimates.clear();
    systemEstimates.set(m.content, n);
  }
  return n;
}

function textEstimate(text: string): number {
  let n = 0;
  for (const piece of text.match(PIECE) ?? []) n += Math.max(1, Math.ceil(Buffer.byteLength(piece, 'utf8') / 4));
  return n;
}

/** What the provider is asked: the call's options with its output cap always set (a fallback keeps the asked model's cap: that is what was reserved). */
function providerOptions(call: ModelCall, served: RegisteredModel = call.model): ModelCallOptions {
  const options: ModelCallOptions = { model: served.upstreamId, messages: call.messages, maxTokens: outputCap(call.model, call.maxTokens) };
  if (call.temperature !== undefined) options.temperature = call.temperature;
  if (call.topP !== undefined) options.topP = call.topP;
  if (call.stop?.length) options.stop = call.stop;
  if (call.suffix !== undefined) options.suffix = call.suffix;
  if (call.hints) options.hints = call.hints;
  if (call.signal) options.signal = call.signal;
  return options;
}

/**
 * The most tokens a call may use: the prompt estimate plus its output cap, or exactly what a provider
 * that knows in advance (the sandbox) says the call will use.
 */
export function tokensToReserve(call: ModelCall): number {
  // With fallbacks, enough for whichever of them ends up serving.
  const cap = outputCap(call.model, call.maxTokens);
  let most = 0;
  let estimate: number | undefined;
  for (const model of candidatesFor(call)) {
    const planned = model.provider.plannedUsage?.(providerOptions(call, model));
    most = Math.max(most, planned ? planned.promptTokens + planned.completionTokens : (estimate ??= promptEstimate(call)) + cap);
  }
  return most;
}

/** The prompt estimate of a call: its messages, plus a fill-in-the-middle suffix. */
function promptEstimate(call: ModelCall): number {
  return estimatePromptTokens(call.messages) + (call.suffix ? messageEstimate({ role: 'user', content: call.suffix }) : 0);
}

/** Holds a call's most tokens from the subject's budget, or throws 429 `rate_limited` (Retry-After) holding nothing. */
export function reserveModelCall(spend: TokenSpend, call: ModelCall): Promise<TokenReservation> {
  return spend.reserve(call.subject, tokensToReserve(call));
}

/**
 * The one streaming model-call loop (POST /generate as JSON or SSE, channel generations, run steps):
 * reserve → stream upstream, aborting when `signal` fires → settle to the real usage (what was used when
 * the call failed or was aborted: the provider's count, else the prompt estimate plus the pieces received).
 * Provider failures come out as the provider's ProviderError (502/503/504), an abort as CancelledError.
 */
export async function callModel(spend: TokenSpend, call: ModelCall, meter?: UsageMeter): Promise<ModelCallResult> {
  const candidates = candidatesFor(call);
  const reservation = call.reservation ?? await reserveModelCall(spend, call);
  if (call.signal?.aborted) {
    await reservation.release();
    throw new CancelledError();
  }
  const pieces: string[] = [];
  let usage: Usage | undefined;
  let finishReason: FinishReason = 'stop';
  let spent = 0;
  let served = candidates[0]!;
  let upstreamMs = 0;
  let outcome: 'succeeded' | 'failed' | 'cancelled' = 'failed';
  let committed!: Promise<void>;
  try {
    for (let i = 0; ; i++) {
      served = candidates[i]!;
      call.onAttempt?.(served);
      const started = performance.now();
      try {
        for await (const part of served.provider.stream(providerOptions(call, served))) {
          if (part.type === 'text') {
            pieces.push(part.text);
            // Await only a real hold-back: awaiting a plain return value still costs a turn per token.
            const held = call.onText?.(part.text);
            if (held) await held;
          } else {
            usage = part.usage;
            finishReason = part.finishReason;
          }
        }
        break;
      } catch (error) {
        // Before the first piece of output the next model may serve; after it, never (the caller has text).
        if (pieces.length > 0 || i + 1 >= candidates.length || call.signal?.aborted || !shouldFallBack(error)) throw error;
      } finally {
        upstreamMs += performance.now() - started;
      }
    }
    if (!usage) throw new ProviderError('upstream_error', 'The provider ended the response without reporting completion.', false);
    outcome = 'succeeded';
  } catch (error) {
    const mapped = asCallError(error, call.signal);
    if (mapped instanceof CancelledError) outcome = 'cancelled';
    throw mapped;
  } finally {
    // Tokens spent are charged whether or not the caller stayed to read them. Without the provider's
    // count: the prompt estimate (computed only then) plus the pieces received.
    const estimate = usage ? 0 : promptEstimate(call);
    spent = usage ? usage.promptTokens + usage.completionTokens : estimate + pieces.length;
    committed = settleAndRecord(reservation, spent, call, meter && {
      subject: call.subject, model: served.id, outcome,
      promptTokens: usage ? usage.promptTokens : estimate, completionTokens: usage ? usage.completionTokens : pieces.length,
    }, meter);
    if (outcome !== 'succeeded' || !call.deferCommit) await committed;
    // The caller awaits it; until then a failure must not count as unhandled.
    else committed.catch(() => {});
  }
  return { text: pieces.join(''), usage, finishReason, tokens: spent, model: served, upstreamMs, committed };
}

/** The settle and the usage row of a call, started together (the row joins the next group commit at once). */
async function settleAndRecord(reservation: TokenReservation, spent: number, call: ModelCall, entry: UsageEntry | undefined, meter: UsageMeter | undefined): Promise<void> {
  const recorded = entry && meter!.record(entry);
  // Marked handled now: a usage write that fails while the settle is pending must not be an unhandled rejection
  // (that ends a Node process); `await recorded` below still throws its error to the caller.
  recorded?.catch(() => {});
  await reservation.settle(spent);
  call.onSettled?.(spent);
  await recorded;
}

/** What the caller is told: an abort (the caller's, or one the provider reports) is the one CancelledError; anything else as thrown. */
function asCallError(error: unknown, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted || error instanceof CancelledError) return new CancelledError();
  return error;
}
