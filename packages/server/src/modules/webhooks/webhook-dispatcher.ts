import type { WebhookDeliveriesTable } from '../../storage/database.js';
import type { WebhooksRepo } from '../../storage/repos/webhooks-repo.js';
import { nextAttemptAt, type RetrySchedule } from './webhook-backoff.js';
import type { DeliveryQueue } from './delivery-queue.js';
import { sendWebhook, type SenderOptions } from './webhook-sender.js';
import { signatureHeader } from './webhook-signature.js';

export interface DispatcherOptions extends SenderOptions {
  schedule: RetrySchedule;
  /** How often pending deliveries that are due are handed to the queue again (a job lost with Redis, or a failed enqueue). */
  sweepMs: number;
  onError: (error: unknown, what: string) => void;
}

/** After claiming an attempt, how long past its timeout the delivery waits before another instance may take it up (its instance died). */
const LEASE_GRACE_MS = 5_000;
/** Pending deliveries handed to the queue at start, and per sweep. */
const RESCHEDULE_BATCH = 10_000;
const SWEEP_BATCH = 500;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Sends deliveries: each attempt is claimed in the database (a compare-and-set on `attempts`), signed with a
 * fresh timestamp, POSTed, and its outcome recorded; one that got no 2xx is scheduled again with backoff until
 * 24 hours after its event, then `failed`. The rows are the truth: at start and every `sweepMs`, pending
 * deliveries are (re)scheduled from them, so deliveries survive restarts and lost jobs.
 */
export class WebhookDispatcher {
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly repo: WebhooksRepo, private readonly queue: DeliveryQueue, private readonly options: DispatcherOptions) {}

  get queueName(): DeliveryQueue['name'] {
    return this.queue.name;
  }

  async start(): Promise<void> {
    await this.queue.start((id, attempt) => this.attempt(id, attempt));
    await this.reschedule(RESCHEDULE_BATCH);
    this.sweeper = setInterval(() => {
      void this.reschedule(SWEEP_BATCH, iso(Date.now())).catch((e) => this.options.onError(e, 'webhook sweep failed'));
    }, this.options.sweepMs).unref();
  }

  /** New deliveries, recorded: their first attempt now (a failed enqueue is left to the sweep). */
  async enqueue(rows: WebhookDeliveriesTable[]): Promise<void> {
    for (const row of rows) await this.queue.schedule(row.id, 1, Date.now()).catch((e) => this.options.onError(e, 'webhook delivery not queued (the sweep retries)'));
  }

  private async reschedule(limit: number, dueBy?: string): Promise<void> {
    for (const row of await this.repo.pending(limit, dueBy)) {
      await this.queue.schedule(row.id, row.attempts + 1, Date.parse(row.next_attempt_at ?? '') || Date.now());
    }
  }

  /** One attempt of one delivery (the queue's handler). */
  async attempt(id: string, attempt: number): Promise<number | void> {
    const row = await this.repo.delivery(id);
    if (!row || row.status !== 'pending') return;
    const due = Date.parse(row.next_attempt_at ?? row.created_at);
    if (row.attempts !== attempt - 1) {
      // A job of another attempt (run twice, or its attempt's instance died): the row names the attempt to make.
      if (row.attempts >= attempt) await this.queue.schedule(id, row.attempts + 1, due);
      return;
    }
    if (due > Date.now() + 20) return due;
    const claimedAt = Date.now();
    if (!(await this.repo.claim(id, attempt, iso(claimedAt), iso(claimedAt + this.options.timeoutMs + LEASE_GRACE_MS)))) return;
    const outcome = await sendWebhook(row.url, row.body, {
      'codeloom-signature': signatureHeader(row.secret, row.body),
      'codeloom-event': row.event_type,
      'codeloom-delivery': row.id,
    }, this.options);
    if (outcome.error === null) {
      await this.repo.succeeded(id, attempt, outcome.status!, iso(Date.now()));
      return;
    }
    const next = nextAttemptAt(this.options.schedule, Date.parse(row.created_at), attempt, Date.now());
    await this.repo.attemptFailed(id, attempt, { responseStatus: outcome.status, error: outcome.error, nextAttemptAt: next === null ? null : iso(next) });
    if (next !== null) await this.queue.schedule(id, attempt + 1, next);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.queue.close();
  }
}
