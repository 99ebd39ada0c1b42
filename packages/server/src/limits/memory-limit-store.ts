import { adjusted, stateOf, windowBounds, windowKey, type ConsumeResult, type LimitStore, type WindowSpec, type WindowState } from './limit-store.js';

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

  async consume(windows: WindowSpec[], cost = 1): Promise<ConsumeResult> {
    const nowMs = this.now();
    const current = windows.map((w) => this.read(w, nowMs));
    const allowed = windows.every((w, i) => current[i]!.count + cost <= w.limit);
    if (allowed && cost > 0) {
      windows.forEach((w, i) => { current[i]!.count += cost; this.write(w, current[i]!.key, current[i]!.count, nowMs); });
    }
    return { allowed, states: windows.map((w, i) => stateOf(w, current[i]!.count, nowMs)), atMs: nowMs };
  }

  async adjust(windows: WindowSpec[], delta: number, atMs: number): Promise<WindowState[]> {
    const nowMs = this.now();
    return windows.map((w) => {
      const entry = this.counters.get(windowKey(w, atMs));
      if (!entry || entry.expiresAt <= nowMs) return stateOf(w, 0, atMs);
      entry.count = adjusted(entry.count, delta, w.limit);
      return stateOf(w, entry.count, atMs);
    });
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

  private sweep() {
    const nowMs = this.now();
    for (const [key, entry] of this.counters) if (entry.expiresAt <= nowMs) this.counters.delete(key);
  }

  async close() {
    clearInterval(this.sweeper);
  }
}
