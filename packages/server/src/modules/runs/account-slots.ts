import type { Redis } from 'ioredis';

/**
 * Per-account run slots shared by every instance (CODELOOM_RUNS_PER_ACCOUNT
 * across the cluster): a sorted set per account of the runs executing, each
 * scored with the time its hold lapses. Holders renew; a dead instance's
 * hold lapses by itself.
 */
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[3]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return 1
end
return 0`;

export class AccountSlots {
  constructor(private readonly redis: Redis, private readonly prefix: string, private readonly perAccount: number, private readonly holdMs: number) {}

  async acquire(account: string, runId: string): Promise<boolean> {
    const now = Date.now();
    return (await this.redis.eval(ACQUIRE, 1, this.key(account), now, now + this.holdMs, runId, this.perAccount, this.holdMs * 2)) === 1;
  }

  async renew(account: string, runId: string): Promise<void> {
    await this.redis.zadd(this.key(account), 'XX', Date.now() + this.holdMs, runId);
  }

  async release(account: string, runId: string): Promise<void> {
    await this.redis.zrem(this.key(account), runId);
  }

  private key(account: string): string {
    return `${this.prefix}slots:${account}`;
  }
}
