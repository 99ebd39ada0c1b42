import type { Kysely } from 'kysely';
import type { Database, WebhookDeliveriesTable, WebhooksTable } from '../database.js';

/** A delivery as its job needs it: the row, and where and with what key it goes. */
export interface DueDelivery extends WebhookDeliveriesTable { url: string; secret: string }

/** Where an attempt that did not succeed leaves its delivery: waiting for `nextAttemptAt`, or `failed` (null). */
export interface AttemptFailure { responseStatus: number | null; error: string; nextAttemptAt: string | null }

/**
 * Webhooks of an organization (its owner account) and their deliveries. Every change of a delivery is a
 * compare-and-set on its `attempts` and `status`, so two instances never make (or record) the same attempt twice.
 */
export class WebhooksRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async create(row: WebhooksTable): Promise<void> {
    await this.db.insertInto('webhooks').values(row).execute();
  }

  async count(userId: string): Promise<number> {
    const r = await this.db.selectFrom('webhooks').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** The account's webhooks, newest first. */
  async list(userId: string): Promise<WebhooksTable[]> {
    return this.db.selectFrom('webhooks').selectAll().where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  }

  async get(userId: string, id: string): Promise<WebhooksTable | undefined> {
    return this.db.selectFrom('webhooks').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  }

  /** Deletes a webhook of this account (its deliveries go with it); false when it has none by that id. */
  async delete(userId: string, id: string): Promise<boolean> {
    const res = await this.db.deleteFrom('webhooks').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  async insertDeliveries(rows: WebhookDeliveriesTable[]): Promise<void> {
    if (rows.length) await this.db.insertInto('webhook_deliveries').values(rows).execute();
  }

  /** A webhook's latest deliveries, newest first. */
  async deliveries(webhookId: string, limit: number): Promise<WebhookDeliveriesTable[]> {
    return this.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId)
      .orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  async delivery(id: string): Promise<DueDelivery | undefined> {
    return this.db.selectFrom('webhook_deliveries').innerJoin('webhooks', 'webhooks.id', 'webhook_deliveries.webhook_id')
      .selectAll('webhook_deliveries').select(['webhooks.url', 'webhooks.secret'])
      .where('webhook_deliveries.id', '=', id).executeTakeFirst();
  }

  /**
   * Claims attempt `attempt` of a pending delivery that is due: one guarded UPDATE (the delivery must still have
   * made `attempt - 1` attempts). Until `leaseUntil` the delivery is not tried again, so an attempt whose
   * instance died is taken up after it. False when another instance has it, or it finished.
   */
  async claim(id: string, attempt: number, now: string, leaseUntil: string): Promise<boolean> {
    const res = await this.db.updateTable('webhook_deliveries').set({ attempts: attempt, next_attempt_at: leaseUntil })
      .where('id', '=', id).where('status', '=', 'pending').where('attempts', '=', attempt - 1)
      .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', now)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async succeeded(id: string, attempt: number, responseStatus: number, at: string): Promise<void> {
    await this.db.updateTable('webhook_deliveries')
      .set({ status: 'succeeded', response_status: responseStatus, last_error: null, next_attempt_at: null, delivered_at: at })
      .where('id', '=', id).where('status', '=', 'pending').where('attempts', '=', attempt).execute();
  }

  async attemptFailed(id: string, attempt: number, failure: AttemptFailure): Promise<void> {
    await this.db.updateTable('webhook_deliveries')
      .set({ status: failure.nextAttemptAt ? 'pending' : 'failed', response_status: failure.responseStatus, last_error: failure.error, next_attempt_at: failure.nextAttemptAt })
      .where('id', '=', id).where('status', '=', 'pending').where('attempts', '=', attempt).execute();
  }

  /** Pending deliveries (oldest first), optionally only those due by `dueBy`: what the delivery jobs should hold. */
  async pending(limit: number, dueBy?: string): Promise<Array<Pick<WebhookDeliveriesTable, 'id' | 'attempts' | 'next_attempt_at'>>> {
    let q = this.db.selectFrom('webhook_deliveries').select(['id', 'attempts', 'next_attempt_at']).where('status', '=', 'pending');
    if (dueBy) q = q.where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', dueBy)]));
    return q.orderBy('next_attempt_at', 'asc').limit(limit).execute();
  }
}
