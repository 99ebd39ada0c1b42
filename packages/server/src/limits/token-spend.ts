import { PLANS, type Environment, type PlanName } from '@codeloom/protocol';
import { AppError, rateLimited, retryAfterHeader, secondsUntil } from '../errors.js';
import { TOTAL_END, type LimitStore, type WindowSpec, type WindowState } from './limit-store.js';
import type { BudgetSource, BudgetWindow } from './budget-source.js';

/** Whose budget a model call spends: an account in one environment, on its plan (a Principal fits). */
export interface SpendSubject {
  user: { id: string };
  /** The organization (its `id` selects its budgets; absent in tools that charge no budget). */
  org: { id?: string; plan: PlanName };
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
  /** Micro-dollars held from the subject's budgets (0 when none applies). */
  readonly costMicros: number;
  /**
   * Settles to what the call really used (tokens, and its cost in micro-dollars for the budgets), so that
   * exactly that is charged: the rest goes back to the window it was taken from; use beyond the reservation
   * is charged too, into the current window up to its limit and past it into the next window (carried,
   * never dropped). Only the first settle counts.
   */
  settle(used: number, costMicros?: number): Promise<void>;
  /** Gives it all back (the call never started): `settle(0)`, and a no-op once settled. */
  release(): Promise<void>;
}

/** What a reservation is made of, for the words of a refusal: the prompt's bound and the output cap. */
export interface ReservationParts {
  prompt: number;
  output: number;
}

const FREE: TokenReservation = { tokens: 0, costMicros: 0, settle: async () => {}, release: async () => {} };

/**
 * The one home of a model call's token spend (CONTRACT §6, §11, §12.2). `reserve` takes the call's most
 * tokens (an upper bound of its prompt + its output cap) from every token window that applies at once (the
 * plan's tokens per minute; an API key's tokens_per_minute and monthly_tokens), all or nothing, in one atomic
 * step of the LimitStore (a Lua script on Redis), so across instances and concurrent calls the tokens
 * admitted in a window never exceed its figure. `settle` then makes the charge exactly what was used, in one
 * atomic step too. The store takes one amount per window, so the dollar budgets that apply (a BudgetSource,
 * in micro-dollars) are reserved and settled with the tokens in the same step.
 */
export class TokenSpend {
  private budgets: BudgetSource | undefined;

  constructor(
    private readonly store: LimitStore,
    /** Told when a settle could not reach the store; the reservation then stays held (the safe side) until its window ends. */
    private readonly onSettleError: (error: unknown) => void = (error) => process.emitWarning(`token settle failed: ${String(error)}`),
  ) {}

  /** Dollar budgets, reserved with the tokens from now on. */
  attachBudgets(budgets: BudgetSource): void {
    this.budgets = budgets;
  }

  /** The windows a subject's model tokens count against; none in the sandbox environment. */
  static windowsFor(subject: SpendSubject): WindowSpec[] {
    if (subject.environment === 'sandbox') return [];
    return [tokenWindow(`${subject.user.id}:${subject.environment}`, subject.org.plan), ...keyTokenWindows(subject)];
  }

  /**
   * Holds `tokens` (and `costMicros` from every budget that applies), or throws without holding anything:
   * 400 `request_too_large` when the amount is more than a window's or a budget's whole figure (the call can
   * never fit: waiting would not help); else 429 `rate_limited` (a token window, with Retry-After and
   * X-RateLimit-* headers) or 429 `budget_exceeded` (a budget: Retry-After when its period resets, none for
   * a `total` budget) when one has not that much left now.
   */
  async reserve(subject: SpendSubject, tokens: number, parts?: ReservationParts, costMicros = 0): Promise<TokenReservation> {
    const tokenWindows = TokenSpend.windowsFor(subject);
    if (!tokenWindows.length) return FREE;
    const budgetWindows = this.budgets ? await this.budgets.windowsFor(subject) : [];
    const amount = Math.max(1, Math.ceil(tokens));
    const cost = Math.max(0, Math.ceil(costMicros));
    for (const w of tokenWindows) if (amount > w.limit) throw tooLarge(w, amount, parts);
    for (const w of budgetWindows) if (cost > w.limit) throw costTooLarge(w, cost);
    const windows: WindowSpec[] = budgetWindows.length ? [...tokenWindows, ...budgetWindows] : tokenWindows;
    const amounts = budgetWindows.length ? [...tokenWindows.map(() => amount), ...budgetWindows.map(() => cost)] : amount;
    const { allowed, states, atMs } = await this.store.consume(windows, amounts);
    if (!allowed) {
      const i = budgetWindows.findIndex((_, j) => states[tokenWindows.length + j]!.remaining < cost);
      if (i < 0 || tokenWindows.some((_, j) => states[j]!.remaining < amount)) throw refusal(tokenWindows, states, amount);
      const budgetState = states[tokenWindows.length + i]!;
      this.budgets!.refused(budgetWindows[i]!, budgetState);
      throw budgetRefusal(budgetWindows[i]!, budgetState, cost);
    }
    let settled = false;
    const settle = async (used: number, usedMicros = 0) => {
      if (settled) return;
      settled = true;
      const charge = Math.max(0, Math.round(used));
      const chargeMicros = Math.max(0, Math.round(usedMicros));
      // Without budgets an exact reservation needs no second step; a budget's alerts need its state after the call.
      if (charge === amount && !budgetWindows.length) return;
      try {
        const after = await this.store.settle(windows,
          windows.map((_, i) => (i < tokenWindows.length ? amount : cost)),
          windows.map((_, i) => (i < tokenWindows.length ? charge : chargeMicros)), atMs);
        if (budgetWindows.length) this.budgets!.settled(budgetWindows, after.slice(tokenWindows.length));
      } catch (error) {
        this.onSettleError(error);
      }
    };
    return { tokens: amount, costMicros: budgetWindows.length ? cost : 0, settle, release: () => settle(0, 0) };
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

/** Micro-dollars in words: "$0.004200". */
export const dollars = (micros: number): string => `$${(micros / 1_000_000).toFixed(6)}`;

/** 429 `budget_exceeded`: a budget has not the call's most cost left; Retry-After when its period resets (none for `total`). */
function budgetRefusal(w: BudgetWindow, s: WindowState, needed: number): AppError {
  const when = w.total ? 'it is a total budget and does not reset' : `it resets at ${new Date(s.resetAt * 1000).toISOString()}`;
  const detail = `${capitalize(w.scopeWords)} ${w.period === 'total' ? 'total' : `${w.period === 'day' ? 'daily' : 'monthly'}`} budget of ${dollars(w.limit)} (${w.budgetId}) is reached: ${dollars(s.remaining)} left, this call may cost up to ${dollars(needed)} (its prompt and max_tokens at the model's price); ${when}.`;
  // A total budget never frees up: no Retry-After, and `x-should-retry: false`, which the OpenAI and Anthropic SDKs honour (they retry any 429 otherwise).
  return new AppError('budget_exceeded', detail, { headers: s.resetAt < TOTAL_END ? retryAfterHeader(secondsUntil(s.resetAt)) : { 'x-should-retry': 'false' } });
}

/** 400 `request_too_large`: the call's most cost alone is more than a budget's whole amount. */
function costTooLarge(w: BudgetWindow, needed: number): AppError {
  return new AppError('request_too_large',
    `This call may cost up to ${dollars(needed)} (its prompt and max_tokens at the model's price): more than ${w.scopeWords} whole budget of ${dollars(w.limit)} (${w.budgetId}), so it can never fit; lower max_tokens or shorten the prompt.`);
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
