import { nextWindowKey, settleLimit, settled, stateOf, windowBounds, windowKey, type ConsumeResult, type LimitStore, type WindowSpec, type WindowState } from './limit-store.js';

/** One process's counters. Exact because Node runs this synchronously: nothing interleaves between check and add. */
export class MemoryLimitStore implements LimitStore {
  private readonly counters = new Map<string, { count: number; expiresAt: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.sweeper = setInterval(() => this.sweep(), 30_000);
    this.sweeper.unref();
  }

  private read(w: WindowSpec, nowMs: number): { key: string; count: number } {
    const key = windowKey(w, nowMs);
    const entry = this.counters.get(key);
    return { key, count: entry && entry.expiresAt > nowMs ? entry.count : 0 };
  }

  private write(w: WindowSpec, key: string, count: number, nowMs: number) {
    // The key names the window, so a live entry under it already has this window's end.
    const entry = this.counters.get(key);
    if (entry && entry.expiresAt > nowMs) entry.count = count;
    else this.counters.set(key, { count, expiresAt: windowBounds(w, nowMs).end * 1000 });
  }

  async consume(windows: WindowSpec[], cost: number | readonly number[] = 1): Promise<ConsumeResult> {
    const nowMs = this.now();
    const costOf = typeof cost === 'number' ? () => cost : (i: number) => cost[i] ?? 0;
    const current = windows.map((w) => this.read(w, nowMs));
    const allowed = windows.every((w, i) => current[i]!.count + costOf(i) <= w.limit);
    if (allowed) {
      windows.forEach((w, i) => {
        const c = costOf(i);
        if (c <= 0) return;
        current[i]!.count += c;
        this.write(w, current[i]!.key, current[i]!.count, nowMs);
      });
    }
    return { allowed, states: windows.map((w, i) => stateOf(w, current[i]!.count, nowMs)), atMs: nowMs };
  }

  async settle(windows: WindowSpec[], reserved: readonly number[], used: readonly number[], atMs: number): Promise<WindowState[]> {
    const nowMs = this.now();
    return windows.map((w, i) => {
      const cur = this.read(w, nowMs);
      const delta = Math.round((used[i] ?? 0) - (reserved[i] ?? 0));
      if (delta === 0) return stateOf(w, cur.count, nowMs);
      const nextKey = nextWindowKey(w, nowMs);
      const nextEntry = this.counters.get(nextKey);
      const next = nextEntry && nextEntry.expiresAt > nowMs ? nextEntry.count : 0;
      const out = settled(cur.count, next, delta, settleLimit(w), windowKey(w, atMs) === cur.key);
      if (out.current !== cur.count) this.write(w, cur.key, out.current, nowMs);
      if (out.next !== next) {
        if (nextEntry && nextEntry.expiresAt > nowMs) nextEntry.count = out.next;
        else this.counters.set(nextKey, { count: out.next, expiresAt: windowBounds(w, windowBounds(w, nowMs).end * 1000).end * 1000 });
      }
      return stateOf(w, out.current, nowMs);
    });
  }

  adjust(windows: WindowSpec[], delta: number, atMs: number): Promise<WindowState[]> {
    const n = windows.map(() => Math.abs(delta));
    const zero = windows.map(() => 0);
    return delta < 0 ? this.settle(windows, n, zero, atMs) : this.settle(windows, zero, n, atMs);
  }

  async add(windows: WindowSpec[], amount: number): Promise<WindowState[]> {
    const nowMs = this.now();
    return windows.map((w) => {
      const { key, count } = this.read(w, nowMs);
      this.write(w, key, count + amount, nowMs);
      return stateOf(w, count + amount, nowMs);
    });
  }

  async peek(windows: WindowSpec[]): Promise<WindowState[]> {
    const nowMs = this.now();
    return windows.map((w) => stateOf(w, this.read(w, nowMs).count, nowMs));
  }

  async seed(w: WindowSpec, count: number): Promise<boolean> {
    const nowMs = this.now();
    const key = windowKey(w, nowMs);
    const entry = this.counters.get(key);
    if (entry && entry.expiresAt > nowMs) return false;
    this.write(w, key, count, nowMs);
    return true;
  }

  private sweep() {
    const nowMs = this.now();
    for (const [key, entry] of this.counters) if (entry.expiresAt <= nowMs) this.counters.delete(key);
  }

  async close() {
    clearInterval(this.sweeper);
  }
}
