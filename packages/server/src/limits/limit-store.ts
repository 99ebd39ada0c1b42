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
  /** One window that never ends (a budget for all time): no expiry, and use above its limit stays in it (there is no next window). */
  total?: boolean;
}

/** Where a `total` window "ends" (2100-01-01): it never frees up. */
export const TOTAL_END = 4_102_444_800;

export interface WindowState {
  limit: number;
  /** What the window holds now (reserved and settled; may exceed `limit` only in a `total` window). */
  used: number;
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
  /**
   * Adds `cost` to every window only if every window stays within its limit: all or nothing, atomically.
   * `cost` is one amount for all, or one per window (tokens in one window, micro-dollars in another).
   */
  consume(windows: WindowSpec[], cost?: number | readonly number[]): Promise<ConsumeResult>;
  /** Adds `amount` to every window unconditionally (failed logins). */
  add(windows: WindowSpec[], amount: number): Promise<WindowState[]>;
  /**
   * Settles a reservation taken by `consume` at `atMs`, in one atomic step over all its windows: per
   * window, what was held (`reserved[i]`) becomes what was used (`used[i]`), as `settled` defines it.
   * A refund goes back to the reservation's window while that window is current (an ended one no longer
   * matters); use above the reservation is charged in full: into the current window up to its limit, and
   * what is beyond the limit into the next window (carried, never dropped nor capped).
   */
  settle(windows: WindowSpec[], reserved: readonly number[], used: readonly number[], atMs: number): Promise<WindowState[]>;
  /**
   * Moves the windows of a reservation taken at `atMs` by `delta`: `settle` with a reservation of `-delta`
   * and no use (a refund: never below zero), or with `delta` used beyond nothing reserved (an addition, carried as settle does).
   */
  adjust(windows: WindowSpec[], delta: number, atMs: number): Promise<WindowState[]>;
  /** Current state without changing anything. */
  peek(windows: WindowSpec[]): Promise<WindowState[]>;
  /**
   * Sets the window current now to `count` only if the store holds nothing for it (a counter rebuilt from
   * the database after a restart: a budget's spend). True when it was set.
   */
  seed(window: WindowSpec, count: number): Promise<boolean>;
  close(): Promise<void>;
}

export function windowStart(windowSec: number, nowMs: number): number {
  return Math.floor(nowMs / 1000 / windowSec) * windowSec;
}

/** Start and end (Unix seconds) of the window current at `nowMs`. */
const TOTAL_BOUNDS = Object.freeze({ start: 0, end: TOTAL_END });
/** The calendar month last asked for (every call of a month asks for the same one: no Date per call). */
let lastMonth = { start: 0, end: 0 };

export function windowBounds(w: WindowSpec, nowMs: number): { start: number; end: number } {
  if (w.total) return TOTAL_BOUNDS;
  if (w.monthly) {
    const t = nowMs / 1000;
    if (t >= lastMonth.start && t < lastMonth.end) return lastMonth;
    const d = new Date(nowMs);
    const bounds = { start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000, end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000 };
    // Only the current month is kept (a test's fake clock may ask for others: they are worked out each time).
    if (Math.abs(nowMs - Date.now()) < 86_400_000) lastMonth = bounds;
    return bounds;
  }
  const start = windowStart(w.windowSec, nowMs);
  return { start, end: start + w.windowSec };
}

export function windowKey(w: WindowSpec, nowMs: number): string {
  if (w.total) return `${w.key}:total`;
  return `${w.key}:${w.monthly ? windowBounds(w, nowMs).start : windowStart(w.windowSec, nowMs)}`;
}

/** The window after the one current at `nowMs` (where a settle carries what is beyond a limit). */
export function nextWindowKey(w: WindowSpec, nowMs: number): string {
  return windowKey(w, windowBounds(w, nowMs).end * 1000);
}

/**
 * One window of a settle (`LimitStore.settle`; the Redis store's Lua script does the same): `current` is the
 * count of the window current now, `next` of the one after it; `delta` is used minus reserved; `inCurrent`
 * whether the reservation was taken in the current window. A refund (delta < 0) lowers the current window,
 * never below zero, only if the reservation is in it. An excess (delta > 0) fills the current window up to
 * its limit and carries the rest into the next one, uncapped: every token used is charged somewhere.
 */
export function settled(current: number, next: number, delta: number, limit: number, inCurrent: boolean): { current: number; next: number } {
  if (delta < 0) return { current: inCurrent ? Math.max(0, current + delta) : current, next };
  const put = Math.min(delta, Math.max(0, limit - current));
  return { current: current + put, next: next + (delta - put) };
}

/** The limit a settle fills the current window up to before carrying: none for a `total` window (nothing comes after it). */
export function settleLimit(w: WindowSpec): number {
  return w.total ? Number.MAX_SAFE_INTEGER : w.limit;
}

/** How long (ms from `nowMs`) the store keeps the counter of the window current at `nowMs`: until it ends, and a second more. */
export function windowTtlMs(w: WindowSpec, nowMs: number): number {
  return windowBounds(w, nowMs).end * 1000 - nowMs + 1000;
}

export function stateOf(w: WindowSpec, count: number, nowMs: number): WindowState {
  return { limit: w.limit, used: count, remaining: Math.max(0, w.limit - count), resetAt: windowBounds(w, nowMs).end };
}

/** The window a client should hear about: the fewest remaining; on a tie, the one that frees up last. */
export function closestToExhaustion(states: WindowState[]): WindowState | undefined {
  let best: WindowState | undefined;
  for (const s of states) {
    if (!best || s.remaining < best.remaining || (s.remaining === best.remaining && s.resetAt > best.resetAt)) best = s;
  }
  return best;
}
