import type { Redis } from 'ioredis';
import { stateOf, windowKey, type ConsumeResult, type LimitStore, type WindowSpec, type WindowState } from './limit-store.js';

/**
 * Check-then-add runs inside one Lua script, so Redis executes it as a
 * single step: instances sharing this Redis can never admit more than a
 * window's limit between them.
 * KEYS = window keys; ARGV = cost, mode (1 = all-or-nothing, 0 = add always), then limit and ttl (ms) per key.
 */
const CONSUME_SCRIPT = `
local cost = tonumber(ARGV[1])
local mode = tonumber(ARGV[2])
local ok = 1
local counts = {}
for i = 1, #KEYS do
  counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
  if mode == 1 and counts[i] + cost > tonumber(ARGV[1 + 2 * i]) then ok = 0 end
end
if ok == 1 and cost > 0 then
  for i = 1, #KEYS do
    counts[i] = redis.call('INCRBY', KEYS[i], cost)
    if counts[i] == cost then redis.call('PEXPIRE', KEYS[i], ARGV[2 + 2 * i]) end
  end
end
table.insert(counts, 1, ok)
return counts
`;

/**
 * A reservation settled or refunded, in one step too (see LimitStore.adjust): a window that has
 * ended (its key expired) is left alone; INCRBY keeps the key's expiry.
 * KEYS = window keys; ARGV = delta, then the limit per key.
 */
const ADJUST_SCRIPT = `
local delta = tonumber(ARGV[1])
local counts = {}
for i = 1, #KEYS do
  local raw = redis.call('GET', KEYS[i])
  counts[i] = 0
  if raw then
    local c = tonumber(raw)
    local n
    if delta < 0 then n = math.max(0, c + delta) else n = math.max(c, math.min(c + delta, tonumber(ARGV[1 + i]))) end
    if n ~= c then redis.call('INCRBY', KEYS[i], n - c) end
    counts[i] = n
  end
end
return counts
`;

type ScriptRedis = Redis & {
  codeloomConsume(numKeys: number, ...args: Array<string | number>): Promise<number[]>;
  codeloomAdjust(numKeys: number, ...args: Array<string | number>): Promise<number[]>;
};

export class RedisLimitStore implements LimitStore {
  private readonly redis: ScriptRedis;

  constructor(redis: Redis, private readonly prefix = 'codeloom:', private readonly now: () => number = Date.now) {
    redis.defineCommand('codeloomConsume', { lua: CONSUME_SCRIPT });
    redis.defineCommand('codeloomAdjust', { lua: ADJUST_SCRIPT });
    this.redis = redis as ScriptRedis;
  }

  private async run(windows: WindowSpec[], cost: number, mode: 0 | 1): Promise<{ ok: boolean; states: WindowState[]; atMs: number }> {
    const nowMs = this.now();
    if (windows.length === 0) return { ok: true, states: [], atMs: nowMs };
    const keys = windows.map((w) => this.prefix + windowKey(w, nowMs));
    const args: Array<string | number> = [cost, mode];
    for (const w of windows) args.push(w.limit, (w.windowSec + 1) * 1000);
    const [ok, ...counts] = await this.redis.codeloomConsume(keys.length, ...keys, ...args);
    return { ok: ok === 1, states: windows.map((w, i) => stateOf(w, Number(counts[i]), nowMs)), atMs: nowMs };
  }

  async consume(windows: WindowSpec[], cost = 1): Promise<ConsumeResult> {
    const { ok, states, atMs } = await this.run(windows, cost, 1);
    return { allowed: ok, states, atMs };
  }

  async adjust(windows: WindowSpec[], delta: number, atMs: number): Promise<WindowState[]> {
    if (windows.length === 0) return [];
    const keys = windows.map((w) => this.prefix + windowKey(w, atMs));
    const counts = await this.redis.codeloomAdjust(keys.length, ...keys, Math.round(delta), ...windows.map((w) => w.limit));
    return windows.map((w, i) => stateOf(w, Number(counts[i]), atMs));
  }

  async add(windows: WindowSpec[], amount: number): Promise<WindowState[]> {
    return (await this.run(windows, amount, 0)).states;
  }

  async peek(windows: WindowSpec[]): Promise<WindowState[]> {
    return (await this.run(windows, 0, 0)).states;
  }

  async close() {}
}
