/**
 * Tries attempt `attempt` of one delivery. Resolves a time (epoch milliseconds) when the job came too early and
 * must come back then; anything else ends the job (the database row says what happens next).
 */
export type DeliveryHandler = (deliveryId: string, attempt: number) => Promise<number | void>;

/**
 * Where delivery attempts wait for their time: one job per attempt (job id = delivery id and attempt, so
 * scheduling an attempt twice is one job). BullMQ with Redis, timers in this process otherwise. The
 * database is the truth: a lost job is scheduled again from the delivery's row (webhooks-service.ts).
 */
export interface DeliveryQueue {
  readonly name: 'in-process' | 'bullmq';
  start(handler: DeliveryHandler): Promise<void>;
  /** Schedules an attempt for `at` (epoch milliseconds; now if past). */
  schedule(deliveryId: string, attempt: number, at: number): Promise<void>;
  /** Takes no more jobs; resolves once the attempts in progress here have ended. */
  close(): Promise<void>;
}

export const deliveryJobId = (deliveryId: string, attempt: number) => `${deliveryId}.${attempt}`;

/** The embedded single instance: a timer per attempt, at most `concurrency` attempts at once. */
export class InProcessDeliveryQueue implements DeliveryQueue {
  readonly name = 'in-process' as const;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly ready: Array<[string, number]> = [];
  private readonly active = new Set<Promise<void>>();
  private handler: DeliveryHandler | undefined;
  private closed = false;

  constructor(private readonly concurrency = 8, private readonly onError: (error: unknown) => void = () => {}) {}

  async start(handler: DeliveryHandler): Promise<void> {
    this.handler = handler;
    this.pump();
  }

  async schedule(deliveryId: string, attempt: number, at: number): Promise<void> {
    const id = deliveryJobId(deliveryId, attempt);
    if (this.closed || this.timers.has(id)) return;
    // setTimeout holds at most about 24.8 days; a later time is re-armed when it fires early.
    const delay = Math.min(Math.max(0, at - Date.now()), 2 ** 31 - 1);
    this.timers.set(id, setTimeout(() => {
      this.ready.push([deliveryId, attempt]);
      this.pump();
    }, delay).unref());
  }

  private pump(): void {
    while (this.handler && !this.closed && this.active.size < this.concurrency && this.ready.length) {
      const [deliveryId, attempt] = this.ready.shift()!;
      const id = deliveryJobId(deliveryId, attempt);
      const run = (async () => {
        try {
          const later = await this.handler!(deliveryId, attempt);
          this.timers.delete(id);
          if (typeof later === 'number') await this.schedule(deliveryId, attempt, later);
        } catch (error) {
          this.timers.delete(id);
          this.onError(error);
        }
      })();
      this.active.add(run);
      void run.finally(() => {
        this.active.delete(run);
        this.pump();
      });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.ready.length = 0;
    await Promise.all([...this.active]);
  }
}
