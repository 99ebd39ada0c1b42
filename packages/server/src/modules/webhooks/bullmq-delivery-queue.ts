import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { deliveryJobId, type DeliveryHandler, type DeliveryQueue } from './delivery-queue.js';

export interface BullDeliveryQueueOptions {
  redisUrl: string;
  /** Key prefix of this deployment in Redis (CODELOOM_REDIS_PREFIX); the queue lives under `${prefix}bull`, next to the runs'. */
  prefix: string;
  /** Attempts in progress at once on this instance. */
  concurrency: number;
  onError?: (error: unknown) => void;
}

interface DeliveryJob { deliveryId: string; attempt: number }

/**
 * Delivery attempts on BullMQ (queue `webhooks`): a delayed job per attempt, taken by one worker of any
 * instance. The job id names the delivery and the attempt, so scheduling it again while it waits is one job;
 * the claim in the database (webhooks-repo.ts) keeps a job run twice (a stalled worker) from sending twice.
 */
export class BullDeliveryQueue implements DeliveryQueue {
  readonly name = 'bullmq' as const;
  private readonly connection: Redis;
  private readonly queue: Queue<DeliveryJob>;
  private worker: Worker<DeliveryJob> | undefined;
  private workerConnection: Redis | undefined;

  constructor(private readonly options: BullDeliveryQueueOptions) {
    this.connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
    this.connection.on('error', (e) => options.onError?.(e));
    this.queue = new Queue<DeliveryJob>('webhooks', { connection: this.connection, prefix: `${options.prefix}bull` });
    this.queue.on('error', (e) => options.onError?.(e));
  }

  async start(handler: DeliveryHandler): Promise<void> {
    this.worker = new Worker<DeliveryJob>('webhooks', (job, token) => this.process(job, token, handler), {
      connection: (this.workerConnection = this.connection.duplicate()),
      prefix: `${this.options.prefix}bull`,
      concurrency: this.options.concurrency,
      // An attempt takes at most the 10 s timeout; a worker that stops renewing its lock for 30 s is gone.
      lockDuration: 30_000,
      autorun: true,
    });
    this.worker.on('error', (e) => this.options.onError?.(e));
    await this.worker.waitUntilReady();
  }

  private async process(job: Job<DeliveryJob>, token: string | undefined, handler: DeliveryHandler): Promise<void> {
    const later = await handler(job.data.deliveryId, job.data.attempt);
    if (typeof later === 'number') {
      await job.moveToDelayed(Math.max(later, Date.now()), token);
      throw new DelayedError();
    }
  }

  async schedule(deliveryId: string, attempt: number, at: number): Promise<void> {
    const jobId = deliveryJobId(deliveryId, attempt);
    const delay = Math.max(0, at - Date.now());
    const add = () => this.queue.add('deliver', { deliveryId, attempt }, { jobId, delay, removeOnComplete: true, removeOnFail: { age: 24 * 3600 } });
    const job = await add();
    // A job of that id that already ended (failed on an error) is replaced: the row says the attempt is still to make.
    const state = await job.getState();
    if (state === 'completed' || state === 'failed') {
      await job.remove().catch(() => {});
      await add();
    }
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.queue.close();
    await this.workerConnection?.quit().catch(() => this.workerConnection?.disconnect());
    await this.connection.quit().catch(() => this.connection.disconnect());
  }
}
