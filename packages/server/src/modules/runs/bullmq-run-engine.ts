import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { AccountSlots } from './account-slots.js';
import type { RunEngine, RunHandler } from './run-engine.js';

export interface BullRunEngineOptions {
  redisUrl: string;
  /** Key prefix of this deployment in Redis (CODELOOM_REDIS_PREFIX). */
  prefix: string;
  perAccount: number;
  /** Runs executing at once on this instance. */
  concurrency: number;
  /** Seconds a claim lasts without renewal (renewed every half of it); a dead instance's runs are taken over after about twice this. */
  leaseSeconds: number;
  onError?: (error: unknown) => void;
}

interface RunJob { runId: string; account: string }

/**
 * Runs on BullMQ: a job per run (job id = run id, so enqueuing twice is one
 * job), claimed atomically by one worker, held with a lock the worker renews;
 * a worker that stops renewing (kill -9) has its jobs reported stalled by a
 * live instance's stalled-job check, which ends the run as `interrupted`.
 * A run whose account already executes CODELOOM_RUNS_PER_ACCOUNT runs
 * anywhere goes back to wait a moment.
 */
export class BullRunEngine implements RunEngine {
  readonly name = 'bullmq' as const;
  private readonly connection: Redis;
  private readonly queue: Queue<RunJob>;
  private readonly slots: AccountSlots;
  private worker: Worker<RunJob> | undefined;
  private stopping = false;

  constructor(private readonly options: BullRunEngineOptions) {
    this.connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
    this.connection.on('error', (e) => options.onError?.(e));
    this.queue = new Queue<RunJob>('runs', { connection: this.connection, prefix: `${options.prefix}bull` });
    this.queue.on('error', (e) => options.onError?.(e));
    this.slots = new AccountSlots(this.connection, options.prefix, options.perAccount, options.leaseSeconds * 2_000);
  }

  async start(handler: RunHandler, onLost: (runId: string) => Promise<void>): Promise<void> {
    const leaseMs = this.options.leaseSeconds * 1000;
    this.worker = new Worker<RunJob>('runs', (job, token) => this.process(job, token, handler), {
      connection: this.connection.duplicate(),
      prefix: `${this.options.prefix}bull`,
      concurrency: this.options.concurrency,
      lockDuration: leaseMs,
      stalledInterval: leaseMs,
      maxStalledCount: 10,
      autorun: true,
    });
    this.worker.on('error', (e) => this.options.onError?.(e));
    // A job whose lock lapsed: its worker is gone. The run ends `interrupted` now; when the job comes round again it finds the run finished.
    this.worker.on('stalled', (jobId) => { void onLost(jobId).catch((e) => this.options.onError?.(e)); });
    await this.worker.waitUntilReady();
  }

  private async process(job: Job<RunJob>, token: string | undefined, handler: RunHandler): Promise<void> {
    const { runId, account } = job.data;
    const retryLater = async (ms: number) => {
      await job.moveToDelayed(Date.now() + ms, token);
      throw new DelayedError();
    };
    if (this.stopping) return retryLater(0);
    if (!(await this.slots.acquire(account, runId))) return retryLater(200 + Math.floor(Math.random() * 300));
    const renew = setInterval(() => { void this.slots.renew(account, runId).catch(() => {}); }, this.options.leaseSeconds * 500);
    let declined = false;
    try {
      declined = (await handler(runId)) === 'declined';
    } finally {
      clearInterval(renew);
      await this.slots.release(account, runId).catch(() => {});
    }
    if (declined) return retryLater(0);
  }

  async enqueue(runId: string, account: string): Promise<void> {
    const add = () => this.queue.add('run', { runId, account }, { jobId: runId, removeOnComplete: { age: 3600 }, removeOnFail: { age: 24 * 3600 } });
    const job = await add();
    // The same id is one job; one that already ended (its run is queued again after a restart) is replaced.
    const state = await job.getState();
    if (state === 'completed' || state === 'failed') {
      await job.remove().catch(() => {});
      await add();
    }
  }

  async hasLiveJob(runId: string): Promise<boolean> {
    const job = await this.queue.getJob(runId);
    if (!job) return false;
    const state = await job.getState();
    return state !== 'completed' && state !== 'failed' && state !== 'unknown';
  }

  async releaseSlot(runId: string, account: string): Promise<void> {
    await this.slots.release(account, runId);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.worker?.close();
  }

  async close(): Promise<void> {
    await this.stop();
    await this.queue.close();
    await this.connection.quit().catch(() => this.connection.disconnect());
  }
}
