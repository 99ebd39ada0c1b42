import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RequestLogsRepo } from '../../storage/repos/request-logs-repo.js';

export interface LogRetentionOptions {
  /** CODELOOM_LOG_RETENTION_DAYS. */
  days: number;
  /** Rows per DELETE (default 1000): each statement holds its locks briefly, and other writes go between them. */
  batch?: number;
  /** Between runs (default one hour); the first run comes a minute after start. */
  intervalMs?: number;
  /** With Redis, one instance at a time runs the job (a lock with a lease); without, the job is harmless to run twice anyway. */
  redis?: Redis | undefined;
  lockKey?: string;
  onError(error: unknown): void;
}

const DAY_MS = 86_400_000;
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/**
 * Deletes request-log rows older than the retention, oldest first, in bounded batches (`id < log_<cutoff>`:
 * the primary key, time-ordered). Each batch is its own statement, so the table is never locked for long
 * and the hot path's inserts go on between them. Two instances running it at once would only delete the
 * same old rows (idempotent); with Redis a lease lock keeps it to one.
 */
export class LogRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private readonly batch: number;

  constructor(private readonly repo: RequestLogsRepo, private readonly options: LogRetentionOptions) {
    this.batch = Math.max(1, options.batch ?? 1000);
  }

  start(): void {
    const interval = this.options.intervalMs ?? 3_600_000;
    const tick = () => {
      this.timer = setTimeout(() => { void this.runOnce().catch(this.options.onError).finally(tick); }, interval);
      this.timer.unref();
    };
    this.timer = setTimeout(() => { void this.runOnce().catch(this.options.onError).finally(tick); }, Math.min(60_000, interval));
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => 0);
  }

  /** One pass: every expired row, batch by batch; resolves with how many were deleted (0 when another instance holds the lock). */
  runOnce(now = Date.now()): Promise<number> {
    this.running ??= this.pass(now).finally(() => { this.running = undefined; });
    return this.running;
  }

  private async pass(now: number): Promise<number> {
    const { redis } = this.options;
    const key = this.options.lockKey ?? 'codeloom:log-retention';
    const token = randomBytes(12).toString('hex');
    if (redis && (await redis.set(key, token, 'PX', 600_000, 'NX')) !== 'OK') return 0;
    try {
      const cutoff = now - this.options.days * DAY_MS;
      let total = 0;
      for (;;) {
        const deleted = await this.repo.deleteBefore(cutoff, this.batch);
        total += deleted;
        if (deleted < this.batch) return total;
        // Let other work in between batches.
        await new Promise((resolve) => setImmediate(resolve));
        if (redis) await redis.pexpire(key, 600_000);
      }
    } finally {
      if (redis) await redis.eval(RELEASE, 1, key, token).catch(() => {});
    }
  }
}
