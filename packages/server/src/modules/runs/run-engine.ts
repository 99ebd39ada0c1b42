import { RunQueue } from './run-queue.js';

/**
 * Executes one run by id (the handler claims it in the database first; a run that is no longer `queued` is left alone).
 * Resolves `'declined'` when this instance is stopping and did not start it: the engine hands it to another instance.
 */
export type RunHandler = (runId: string) => Promise<'declined' | void>;

/**
 * Where queued runs wait and which instance executes each. The handler is
 * given once at start; `enqueue` is idempotent per run id.
 */
export interface RunEngine {
  readonly name: 'in-process' | 'bullmq';
  start(handler: RunHandler, onLost: (runId: string) => Promise<void>): Promise<void>;
  enqueue(runId: string, account: string): Promise<void>;
  /** Whether some instance still holds the run's job (queued, waiting, executing). Unknown in-process: there is only this instance. */
  hasLiveJob(runId: string): Promise<boolean>;
  /** A run whose instance died ended: its account slot is free now rather than when its hold lapses. */
  releaseSlot(runId: string, account: string): Promise<void>;
  /** Stops taking runs; resolves once no run executes here (the caller aborts them). Runs may still be queued (for other instances). */
  stop(): Promise<void>;
  /** Releases the engine's connections (after stop). */
  close(): Promise<void>;
}

/** The embedded single instance: the in-process per-account queue. */
export class InProcessRunEngine implements RunEngine {
  readonly name = 'in-process' as const;
  private readonly queue: RunQueue;
  private readonly queued = new Set<string>();
  private handler: RunHandler | undefined;

  constructor(perAccount: number, total: number) {
    this.queue = new RunQueue(perAccount, total);
  }

  async start(handler: RunHandler): Promise<void> {
    this.handler = handler;
  }

  async enqueue(runId: string, account: string): Promise<void> {
    if (this.queued.has(runId)) return;
    this.queued.add(runId);
    this.queue.enqueue(account, async () => {
      try { await this.handler!(runId); } finally { this.queued.delete(runId); }
    });
  }

  async hasLiveJob(): Promise<boolean> {
    return false;
  }

  async releaseSlot(): Promise<void> {
    // In-process slots end with their job.
  }

  async stop(): Promise<void> {
    this.queue.stop();
    for (let i = 0; i < 1_000 && !this.queue.idle; i++) await new Promise((r) => setTimeout(r, 10));
  }

  async close(): Promise<void> {
    // Nothing to release.
  }
}
