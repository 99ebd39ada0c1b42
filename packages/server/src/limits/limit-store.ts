/**
 * Fixed-window counters. A window is identified by its key and its start
 * (aligned to the epoch), so every instance sharing a store agrees on it.
 */
export interface WindowSpec {
  /** Counter name without the window start, e.g. `rl:usr_1:production:m`. */
  key: string;
  limit: number;
  /** Window length; for a `monthly` window only how long the store keeps the counter (at least 31 days). */
  windowSec: number;
  /** A calendar month (UTC) instead of an epoch-aligned fixed window (an API key's monthly_tokens). */
  monthly?: boolean;
  /** Whose limit this is, in a refusal's words (e.g. "this API key's"); default: the plan's. */
  owner?: string;
}

export interface WindowState {
  limit: number;
  remaining: number;
  /** Unix time (seconds) at which this window frees up. */
  resetAt: number;
}

export interface ConsumeResult {
  allowed: boolean;
  states: WindowState[];
  /** The store's clock when the windows were read: `adjust(…, atMs)` later moves these same windows. */
  atMs: number;
}

export interface LimitStore {
  /** Adds `cost` to every window only if every window stays within its limit: all or nothing, atomically. */
  consume(windows: WindowSpec[], cost?: number): Promise<ConsumeResult>;
  /** Adds `amount` to every window unconditionally (spent tokens, failed logins). */
  add(windows: WindowSpec[], amount: number): Promise<WindowState[]>;
  /**
   * Moves the windows that were current at `atMs` (a reservation's windows) by `delta`, atomically:
   * a refund (delta < 0) never goes below zero; an addition never takes a count past its limit (nor
   * lowers one already past it). A window that has ended is left alone.
   */
  adjust(windows: WindowSpec[], delta: number, atMs: number): Promise<WindowState[]>;
  /** Current state without changing anything. */
  peek(windows: WindowSpec[]): Promise<WindowState[]>;
  close(): Promise<void>;
}

export function windowStart(windowSec: number, nowMs: number): number {
  return Math.floor(nowMs / 1000 / windowSec) * windowSec;
}

/** Start and end (Unix seconds) of the window current at `nowMs`. */
export function windowBounds(w: WindowSpec, nowMs: number): { start: number; end: number } {
  if (w.monthly) {
    const d = new Date(nowMs);
    return { start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000, end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000 };
  }
  const start = windowStart(w.windowSec, nowMs);
  return { start, end: start + w.windowSec };
}

export function windowKey(w: WindowSpec, nowMs: number): string {
  return `${w.key}:${w.monthly ? windowBounds(w, nowMs).start : windowStart(w.windowSec, nowMs)}`;
}

/** A count moved by `delta` as `LimitStore.adjust` defines it (the Redis store's Lua script does the same). */
export function adjusted(count: number, delta: number, limit: number): number {
  if (delta < 0) return Math.max(0, count + delta);
  return Math.max(count, Math.min(count + delta, limit));
}

export function stateOf(w: WindowSpec, count: number, nowMs: number): WindowState {
  return { limit: w.limit, remaining: Math.max(0, w.limit - count), resetAt: windowBounds(w, nowMs).end };
}

/** The window a client should hear about: the fewest remaining; on a tie, the one that frees up last. */
export function closestToExhaustion(states: WindowState[]): WindowState | undefined {
  let best: WindowState | undefined;
  for (const s of states) {
    if (!best || s.remaining < best.remaining || (s.remaining === best.remaining && s.resetAt > best.resetAt)) best = s;
  }
  return best;
}
