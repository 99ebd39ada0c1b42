import { PLANS, type Environment, type PlanName } from '@codeloom/protocol';
import { AppError, rateLimited } from '../errors.js';
import type { LimitStore, WindowSpec, WindowState } from './limit-store.js';

/** Whose budget a model call spends: an account in one environment, on its plan (a Principal fits). */
export interface SpendSubject {
  user: { id: string };
  org: { plan: PlanName };
  environment: Environment;
  /** Set when the call is made with an API key: its usage is counted per key, and its own limits apply. */
  apiKeyId?: string | undefined;
  keyLimits?: KeyLimits | undefined;
}

/** An API key's own limits (each at most the plan's); absent ones are the plan's alone. */
export interface KeyLimits {
  requests_per_minute?: number | null;
  tokens_per_minute?: number | null;
  monthly_tokens?: number | null;
}

/** Tokens held from a budget for one model call, until it settles. */
export interface TokenReservation {
  /** Tokens held (0 in the sandbox environment, which has no quota). */
  readonly tokens: number;
  /**
   * Settles to what the call really used, so that exactly `used` is charged: the rest goes back to the
   * window it was taken from; use beyond the reservation is charged too, into the current window up to its
   * limit and past it into the next window (carried, never dropped). Only the first settle counts.
   */
  settle(used: number): Promise<void>;
  /** Gives it all back (the call never started): `settle(0)`, and a no-op once settled. */
  release(): Promise<void>;
}

/** What a reservation is made of, for the words of a refusal: the prompt's bound and the output cap. */
export interface ReservationParts {
  prompt: number;
  output: number;
}

const FREE: TokenReservation = { tokens: 0, settle: async () => {}, release: async () => {} };

/**
 * The one home of a model call's token spend (CONTRACT §6, §11, §12.2). `reserve` takes the call's most
 * tokens (an upper bound of its prompt + its output cap) from every token window that applies at once (the
 * plan's tokens per minute; an API key's tokens_per_minute and monthly_tokens), all or nothing, in one atomic
 * step of the LimitStore (a Lua script on Redis), so across instances and concurrent calls the tokens
 * admitted in a window never exceed its figure. `settle` then makes the charge exactly what was used, in one
 * atomic step too. The store takes one amount per window, so other meters (a budget in micro-dollars) can be
 * reserved and settled with the tokens in the same step.
 */
export class TokenSpend {
  constructor(
    private readonly store: LimitStore,
    /** Told when a settle could not reach the store; the reservation then stays held (the safe side) until its window ends. */
    private readonly onSettleError: (error: unknown) => void = (error) => process.emitWarning(`token settle failed: ${String(error)}`),
  ) {}

  /** The windows a subject's model tokens count against; none in the sandbox environment. */
  static windowsFor(subject: SpendSubject): WindowSpec[] {
    if (subject.environment === 'sandbox') return [];
    return [tokenWindow(`${subject.user.id}:${subject.environment}`, subject.org.plan), ...keyTokenWindows(subject)];
  }

  /**
   * Holds `tokens`, or throws without holding anything: 400 `request_too_large` when `tokens` is more than a
   * window's whole figure (the call can never fit: waiting would not help), else 429 `rate_limited` (with
   * Retry-After and X-RateLimit-* headers) when a window has not that much left now.
   */
  async reserve(subject: SpendSubject, tokens: number, parts?: ReservationParts): Promise<TokenReservation> {
    const windows = TokenSpend.windowsFor(subject);
    if (!windows.length) return FREE;
    const amount = Math.max(1, Math.ceil(tokens));
    for (const w of windows) if (amount > w.limit) throw tooLarge(w, amount, parts);
    const { allowed, states, atMs } = await this.store.consume(windows, amount);
    if (!allowed) throw refusal(windows, states, amount);
    let settled = false;
    const settle = async (used: number) => {
      if (settled) return;
      settled = true;
      const charge = Math.max(0, Math.round(used));
      if (charge === amount) return;
      try {
        await this.store.settle(windows, windows.map(() => amount), windows.map(() => charge), atMs);
      } catch (error) {
        this.onSettleError(error);
      }
    };
    return { tokens: amount, settle, release: () => settle(0) };
  }

  /** What is left of the subject's tokens this minute (no change). */
  async left(subject: SpendSubject): Promise<WindowState | undefined> {
    const windows = TokenSpend.windowsFor(subject);
    return windows.length ? (await this.store.peek(windows))[0] : undefined;
  }
}

/** The tokens-per-minute window of an account in one environment (`RateLimiter.subjectFor`). */
export function tokenWindow(subject: string, plan: PlanName): WindowSpec {
  return { key: `tpm:${subject}`, limit: PLANS[plan].limits.tokens_per_minute, windowSec: 60 };
}

/** An API key's own token windows (its tokens_per_minute and monthly_tokens), reserved in with the plan's. */
export function keyTokenWindows(subject: SpendSubject): WindowSpec[] {
  const limits = subject.keyLimits;
  if (!subject.apiKeyId || !limits) return [];
  const windows: WindowSpec[] = [];
  if (limits.tokens_per_minute != null) windows.push({ key: `tpm:key:${subject.apiKeyId}`, limit: limits.tokens_per_minute, windowSec: 60, owner: "this API key's" });
  if (limits.monthly_tokens != null) windows.push({ key: `mtok:key:${subject.apiKeyId}`, limit: limits.monthly_tokens, windowSec: 32 * 86_400, monthly: true, owner: "this API key's" });
  return windows;
}

/** A window in words: "Tokens-per-minute limit of 20000", "This API key's monthly token limit of 1000". */
function limitWords(w: WindowSpec): string {
  return `${w.owner ? `${capitalize(w.owner)} ` : ''}${w.monthly ? 'monthly token' : w.owner ? 'tokens-per-minute' : 'Tokens-per-minute'} limit of ${w.limit}`;
}

/** The window that refused, in words and headers; the same 429 over REST, SSE and the channel (as `retry_after`). */
function refusal(windows: WindowSpec[], states: WindowState[], needed: number): AppError {
  const i = Math.max(0, states.findIndex((s) => s.remaining < needed));
  const w = windows[i]!;
  const s = states[i]!;
  const detail = `${limitWords(w)} reached (${s.remaining} left this ${w.monthly ? 'month' : 'minute'}, up to ${needed} needed: prompt and max_tokens).`;
  return rateLimited(detail, { limit: w.limit, remaining: s.remaining, resetAt: s.resetAt }, { report: true });
}

/** 400 `request_too_large`: the call's reservation alone is more than a window's whole figure, so no wait would let it through. */
function tooLarge(w: WindowSpec, needed: number, parts: ReservationParts | undefined): AppError {
  const made = parts ? ` (its prompt counts as up to ${parts.prompt}, its output cap is ${parts.output})` : '';
  return new AppError('request_too_large',
    `This call may use up to ${needed} tokens${made}: more than ${w.owner ?? "the plan's"} ${w.limit} tokens per ${w.monthly ? 'month' : 'minute'}, so it can never fit; lower max_tokens or shorten the prompt.`);
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
