import type { CreateWebhookBody, CreatedWebhook, Webhook, WebhookDeliveries, WebhookDelivery, WebhookEventType, WebhookList } from '@codeloom/protocol';
import { MAX_WEBHOOKS_PER_ACCOUNT } from '@codeloom/protocol';
import { AppError, notFound } from '../../errors.js';
import type { Principal } from '../../identity/principal.js';
import type { WebhookDeliveriesTable, WebhooksTable } from '../../storage/database.js';
import { newId, nowIso } from '../../storage/ids.js';
import type { Store } from '../../storage/store.js';
import { retrySchedule } from './webhook-backoff.js';
import type { DeliveryQueue } from './delivery-queue.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import type { WebhookEvents } from './webhook-events.js';
import { mintWebhookSecret } from './webhook-signature.js';
import { checkWebhookUrl } from './webhook-url.js';

export interface WebhooksOptions {
  /** CODELOOM_WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  queue: DeliveryQueue;
  /** `Codeloom-Webhooks/<version>`. */
  userAgent: string;
  /** The first retry delay; the whole schedule (and the 24 h window) scales with it. Default 10 s. */
  retryBaseMs?: number;
  /** No answer within this long fails an attempt. Default 10 s. */
  timeoutMs?: number;
  /** How often due deliveries whose job was lost are queued again. Default 1 min. */
  sweepMs?: number;
  onError?: (error: unknown, what: string) => void;
}

const toWebhook = (r: WebhooksTable): Webhook => ({
  id: r.id, url: r.url, events: JSON.parse(r.events) as WebhookEventType[], description: r.description, created_at: r.created_at,
});

const toDelivery = (r: WebhookDeliveriesTable): WebhookDelivery => ({
  id: r.id, event: r.event_type as WebhookEventType, event_id: r.event_id, status: r.status as WebhookDelivery['status'],
  attempts: Number(r.attempts), response_status: r.response_status === null ? null : Number(r.response_status), last_error: r.last_error,
  next_attempt_at: r.status === 'pending' ? r.next_attempt_at : null, created_at: r.created_at, delivered_at: r.delivered_at,
});

/** The organization a principal acts for: its owner account (an organization is its account's personal one for now). */
const accountOf = (p: Principal) => p.user.id;

/**
 * An organization's webhooks (CONTRACT §12.2): their endpoints, and the events the server emits to them.
 * `emit` records one delivery per subscribed webhook (the same event id and body for each) and queues it;
 * the dispatcher sends it. A webhook's secret is returned by `create` only, and never logged.
 */
export class WebhooksService implements WebhookEvents {
  private readonly dispatcher: WebhookDispatcher;
  private readonly recording = new Set<Promise<void>>();
  private readonly onError: (error: unknown, what: string) => void;

  constructor(private readonly store: Store, private readonly options: WebhooksOptions) {
    this.onError = options.onError ?? ((error, what) => process.stderr.write(`${what}: ${error instanceof Error ? error.message : String(error)}\n`));
    this.dispatcher = new WebhookDispatcher(store.webhooks, options.queue, {
      allowPrivate: options.allowPrivate, userAgent: options.userAgent, timeoutMs: options.timeoutMs ?? 10_000,
      schedule: retrySchedule(options.retryBaseMs ?? 10_000), sweepMs: options.sweepMs ?? 60_000, onError: this.onError,
    });
  }

  async create(principal: Principal, body: CreateWebhookBody): Promise<CreatedWebhook> {
    const url = checkWebhookUrl(body.url, this.options.allowPrivate);
    const account = accountOf(principal);
    if ((await this.store.webhooks.count(account)) >= MAX_WEBHOOKS_PER_ACCOUNT) {
      throw new AppError('conflict', `An organization may have at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; delete one first.`);
    }
    const row: WebhooksTable = {
      id: newId('whk'), user_id: account, url, events: JSON.stringify(body.events), description: body.description ?? '',
      secret: mintWebhookSecret(), created_at: nowIso(),
    };
    await this.store.webhooks.create(row);
    return { ...toWebhook(row), secret: row.secret };
  }

  async list(principal: Principal): Promise<WebhookList> {
    return { data: (await this.store.webhooks.list(accountOf(principal))).map(toWebhook) };
  }

  async get(principal: Principal, id: string): Promise<Webhook> {
    return toWebhook(await this.owned(principal, id));
  }

  async delete(principal: Principal, id: string): Promise<void> {
    if (!(await this.store.webhooks.delete(accountOf(principal), id))) throw notFound('webhook');
  }

  /** A webhook's latest deliveries, newest first. */
  async deliveries(principal: Principal, id: string, limit = 20): Promise<WebhookDeliveries> {
    const webhook = await this.owned(principal, id);
    return { data: (await this.store.webhooks.deliveries(webhook.id, limit)).map(toDelivery) };
  }

  private async owned(principal: Principal, id: string): Promise<WebhooksTable> {
    const row = await this.store.webhooks.get(accountOf(principal), id);
    if (!row) throw notFound('webhook');
    return row;
  }

  emit(account: string, type: WebhookEventType, data: Record<string, unknown>): void {
    const recorded: Promise<void> = this.record(account, type, data)
      .catch((error) => this.onError(error, `webhook event ${type} not recorded`))
      .finally(() => this.recording.delete(recorded));
    this.recording.add(recorded);
  }

  private async record(account: string, type: WebhookEventType, data: Record<string, unknown>): Promise<void> {
    const hooks = (await this.store.webhooks.list(account)).filter((w) => (JSON.parse(w.events) as string[]).includes(type));
    if (!hooks.length) return;
    const eventId = newId('evt');
    const createdAt = new Date().toISOString();
    const body = JSON.stringify({ id: eventId, type, created_at: createdAt, data });
    const rows: WebhookDeliveriesTable[] = hooks.map((w) => ({
      id: newId('whd'), webhook_id: w.id, event_id: eventId, event_type: type, body, status: 'pending', attempts: 0,
      response_status: null, last_error: null, next_attempt_at: createdAt, created_at: createdAt, delivered_at: null,
    }));
    await this.store.webhooks.insertDeliveries(rows);
    await this.dispatcher.enqueue(rows);
  }

  /** Starts sending: the queue's worker, then every pending delivery scheduled again from its row. */
  async start(): Promise<void> {
    await this.dispatcher.start();
  }

  /** Events being recorded are written (for at most 5 s), then the queue stops after the attempts in progress. */
  async close(): Promise<void> {
    await Promise.race([Promise.all([...this.recording]), new Promise((r) => setTimeout(r, 5_000).unref())]);
    await this.dispatcher.close();
  }
}
