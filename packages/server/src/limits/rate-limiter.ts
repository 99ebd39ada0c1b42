import { PLANS, type Environment, type PlanName } from '@codeloom/protocol';
import { TokenSpend, tokenWindow } from './token-spend.js';
import { closestToExhaustion, type LimitStore, type WindowSpec, type WindowState } from './limit-store.js';

export interface Admission {
  allowed: boolean;
  /** The window to report in X-RateLimit-* headers. */
  report: WindowState | undefined;
  /** Set when refused: which limit, in words. */
  refusedBy?: string;
}

const WINDOW_WORDS: Record<number, string> = { 60: 'Per-minute', 3600: 'Hourly' };

/** Request and token limits per plan (CONTRACT §6), on whichever LimitStore is configured. */
export class RateLimiter {
  /** Model tokens: reserved before a call, settled after it (token-spend.ts). */
  readonly spend: TokenSpend;

  constructor(private readonly store: LimitStore) {
    this.spend = new TokenSpend(store);
  }

  static requestWindows(subject: string, plan: PlanName): WindowSpec[] {
    const { limits } = PLANS[plan];
    const windows: WindowSpec[] = [];
    if (limits.requests_per_minute !== null) windows.push({ key: `rl:${subject}:m`, limit: limits.requests_per_minute, windowSec: 60 });
    windows.push({ key: `rl:${subject}:h`, limit: limits.requests_per_hour, windowSec: 3600 });
    return windows;
  }

  static subjectFor(userId: string, environment: Environment) {
    return `${userId}:${environment}`;
  }

  /** An API key's own requests-per-minute window (its `requests_per_minute`), counted with the plan's. */
  static keyRequestWindows(principal: { apiKeyId?: string | undefined; keyLimits?: { requests_per_minute?: number | null } | undefined } | null | undefined): WindowSpec[] {
    const rpm = principal?.keyLimits?.requests_per_minute;
    return principal?.apiKeyId && rpm != null ? [{ key: `rl:key:${principal.apiKeyId}:m`, limit: rpm, windowSec: 60, owner: "this API key's" }] : [];
  }

  async admit(subject: string, plan: PlanName, keyWindows: WindowSpec[] = []): Promise<Admission> {
    const windows = [...RateLimiter.requestWindows(subject, plan), ...keyWindows];
    const { allowed, states } = await this.store.consume(windows, 1);
    if (allowed) return { allowed, report: closestToExhaustion(states) };
    // Refused means some window is full; report the full one that frees up last, so Retry-After is honest.
    const blocked = states.filter((s) => s.remaining === 0).sort((a, b) => b.resetAt - a.resetAt)[0]!;
    const w = windows[states.indexOf(blocked)]!;
    const words = `${WINDOW_WORDS[w.windowSec] ?? `${w.windowSec}-second`} limit`;
    return { allowed, report: blocked, refusedBy: `${w.owner ? `${w.owner.charAt(0).toUpperCase()}${w.owner.slice(1)} ${words.toLowerCase()}` : words} of ${w.limit} requests reached.` };
  }

  async peek(subject: string, plan: PlanName): Promise<WindowState | undefined> {
    return closestToExhaustion(await this.store.peek(RateLimiter.requestWindows(subject, plan)));
  }

  /** Tokens-per-minute budget: what is left this minute. */
  async tokensLeft(subject: string, plan: PlanName): Promise<WindowState> {
    const [state] = await this.store.peek([RateLimiter.tokenWindow(subject, plan)]);
    return state!;
  }

  /** The tokens-per-minute window of a subject (TokenSpend reserves in it). */
  static tokenWindow(subject: string, plan: PlanName): WindowSpec {
    return tokenWindow(subject, plan);
  }
}
