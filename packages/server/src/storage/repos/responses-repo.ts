import type { Kysely } from 'kysely';
import type { Database, ResponsesTable } from '../database.js';

/** Where a stored response belongs: its organization and environment (a sandbox key never sees live responses). */
export interface ResponseScope { orgId: string; environment: string }

/**
 * Stored Responses API answers (migration 0013). Every read and delete is scoped to an organization and
 * environment, and skips rows past `expires_at` (the hourly cleanup deletes them; until then they are gone already).
 */
export class ResponsesRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: ResponsesTable): Promise<void> {
    await this.db.insertInto('responses').values(row).execute();
  }

  async get(scope: ResponseScope, id: string, now: string): Promise<ResponsesTable | undefined> {
    return this.db.selectFrom('responses').selectAll().where('id', '=', id).where('org_id', '=', scope.orgId)
      .where('environment', '=', scope.environment).where('expires_at', '>', now).executeTakeFirst();
  }

  /** Deletes one; false when this organization has none by that id. */
  async delete(scope: ResponseScope, id: string, now: string): Promise<boolean> {
    const res = await this.db.deleteFrom('responses').where('id', '=', id).where('org_id', '=', scope.orgId)
      .where('environment', '=', scope.environment).where('expires_at', '>', now).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /**
   * Deletes rows that expired at or before `now`, `batch` per statement (by the expires_at index, so each
   * statement is short); how many went. Two instances running it at once only delete the same rows.
   */
  async deleteExpired(now: string, batch = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const due = this.db.selectFrom('responses').select('id').where('expires_at', '<=', now).orderBy('expires_at').limit(batch);
      const res = await this.db.deleteFrom('responses').where('id', 'in', due).executeTakeFirst();
      const n = Number(res.numDeletedRows);
      total += n;
      if (n < batch) return total;
    }
  }
}
