import type { Redis } from 'ioredis';
import { nextWindowKey, settleLimit, stateOf, windowBounds, windowKey, windowTtlMs, type ConsumeResult, type LimitStore, type WindowSpec, type WindowState } from './limit-store.js';

/**
 * Check-then-add runs inside one Lua script, so Redis executes it as a
 * single step: instances sharing this Redis can never admit more than a
 * window's limit between them.
 * KEYS = window keys; ARGV = mode (1 = all-or-nothing, 0 = add always), then cost, limit and ttl (ms) per key.
 */
const CONSUME_SCRIPT = `
local mode = tonumber(ARGV[1])
local ok = 1
local counts = {}
for i = 1, #KEYS do
  counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
  if mode == 1 and counts[i] + tonumber(ARGV[3 * i - 1]) > tonumber(ARGV[3 * i]) then ok = 0 end
end
if ok == 1 then
  for i = 1, #KEYS do
    local cost = tonumber(ARGV[3 * i - 1])
    if cost > 0 then
      counts[i] = redis.call('INCRBY', KEYS[i], cost)
      if counts[i] == cost then redis.call('PEXPIRE', KEYS[i], ARGV[3 * i + 1]) end
    end
  end
end
table.insert(counts, 1, ok)
return counts
`;

/**
 * A reservation settled (see LimitStore.settle and limit-store.ts `settled`), all its windows in one step.
 * KEYS = per window: the current window's key, then the next window's.
 * ARGV = per window: delta (used - reserved), limit, 1 if the reservation is in the current window, then the
 * ttl (ms) of a current and of a next key created here. INCRBY keeps an existing key's expiry.
 */
const SETTLE_SCRIPT = `
local counts = {}
for i = 1, #KEYS / 2 do
  local cur = KEYS[2 * i - 1]
  local nxt = KEYS[2 * i]
  local a = 5 * (i - 1)
  local delta = tonumber(ARGV[a + 1])
  local limit = tonumber(ARGV[a + 2])
  local c = tonumber(redis.call('GET', cur) or '0')
  if delta < 0 then
    if ARGV[a + 3] == '1' and c > 0 then
      local n = math.max(0, c + delta)
      c = redis.call('INCRBY', cur, n - c)
    end
  elseif delta > 0 then
    local put = math.min(delta, math.max(0, limit - c))
    local rest = delta - put
    if put > 0 then
      c = redis.call('INCRBY', cur, put)
      if c == put then redis.call('PEXPIRE', cur, ARGV[a + 4]) end
    end
    if rest > 0 then
      local n = redis.call('INCRBY', nxt, rest)
      if n == rest then redis.call('PEXPIRE', nxt, ARGV[a + 5]) end
    end
  end
  counts[i] = c
end
return counts
`;

type ScriptRedis = Redis & {
  codeloomConsume(numKeys: number, ...args: Array<string | number>): Promise<number[]>;
  codeloomSettle(numKeys: number, ...args: Array<string | number>): Promise<number[]>;
};

export class RedisLimitStore implements LimitStore {
  private readonly redis: ScriptRedis;

  constructor(redis: Redis, private readonly prefix = 'codeloom:', private readonly now: () => number = Date.now) {
    redis.defineCommand('codeloomConsume', { lua: CONSUME_SCRIPT });
    redis.defineCommand('codeloomSettle', { lua: SETTLE_SCRIPT });
    this.redis = redis as ScriptRedis;
  }

  private async run(windows: WindowSpec[], cost: number | readonly number[], mode: 0 | 1): Promise<{ ok: boolean; states: WindowState[]; atMs: number }> {
    const nowMs = this.now();
    if (windows.length === 0) return { ok: true, states: [], atMs: nowMs };
    const keys = windows.map((w) => this.prefix + windowKey(w, nowMs));
    const args: Array<string | number> = [mode];
    windows.forEach((w, i) => args.push(typeof cost === 'number' ? cost : (cost[i] ?? 0), w.limit, windowTtlMs(w, nowMs)));
    const [ok, ...counts] = await this.redis.codeloomConsume(keys.length, ...keys, ...args);
    return { ok: ok === 1, states: windows.map((w, i) => stateOf(w, Number(counts[i]), nowMs)), atMs: nowMs };
  }

  async consume(windows: WindowSpec[], cost: number | readonly number[] = 1): Promise<ConsumeResult> {
    const { ok, states, atMs } = await this.run(windows, cost, 1);
    return { allowed: ok, states, atMs };
  }

  async settle(windows: WindowSpec[], reserved: readonly number[], used: readonly number[], atMs: number): Promise<WindowState[]> {
    if (windows.length === 0) return [];
    const nowMs = this.now();
    const keys: string[] = [];
    const args: Array<string | number> = [];
    for (const [i, w] of windows.entries()) {
      const current = windowKey(w, nowMs);
      const { end } = windowBounds(w, nowMs);
      keys.push(this.prefix + current, this.prefix + nextWindowKey(w, nowMs));
      // A key made here lives until its window ends, and a second more (as consume's do).
      args.push(Math.round((used[i] ?? 0) - (reserved[i] ?? 0)), settleLimit(w), windowKey(w, atMs) === current ? 1 : 0,
        windowTtlMs(w, nowMs), windowBounds(w, end * 1000).end * 1000 - nowMs + 1000);
    }
    const counts = await this.redis.codeloomSettle(keys.length, ...keys, ...args);
    return windows.map((w, i) => stateOf(w, Number(counts[i]), nowMs));
  }

  adjust(windows: WindowSpec[], delta: number, atMs: number): Promise<WindowState[]> {
    const n = windows.map(() => Math.abs(delta));
    const zero = windows.map(() => 0);
    return delta < 0 ? this.settle(windows, n, zero, atMs) : this.settle(windows, zero, n, atMs);
  }

  async add(windows: WindowSpec[], amount: number): Promise<WindowState[]> {
    return (await this.run(windows, amount, 0)).states;
  }

  async peek(windows: WindowSpec[]): Promise<WindowState[]> {
    return (await this.run(windows, 0, 0)).states;
  }

  async seed(w: WindowSpec, count: number): Promise<boolean> {
    const nowMs = this.now();
    return (await this.redis.set(this.prefix + windowKey(w, nowMs), String(Math.round(count)), 'PX', windowTtlMs(w, nowMs), 'NX')) === 'OK';
  }

  async close() {}
}
