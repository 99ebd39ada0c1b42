import { sql, type Kysely } from 'kysely';
import type { BudgetsTable, Database } from '../database.js';

export type BudgetScopeType = 'organization' | 'member' | 'api_key';
export type BudgetPeriod = 'day' | 'month' | 'total';

/** A budget as stored: amounts in integer micro-dollars. */
export interface BudgetRecord {
  id: string;
  orgId: string;
  /** The account that owns the organization. */
  userId: string;
  scope: { type: BudgetScopeType; id: string };
  amountMicros: number;
  period: BudgetPeriod;
  alertThresholds: number[];
  createdAt: string;
  updatedAt: string;
}

const toRecord = (r: BudgetsTable): BudgetRecord => ({
  id: r.id, orgId: r.org_id, userId: r.user_id, scope: { type: r.scope_type as BudgetScopeType, id: r.scope_id },
  amountMicros: Number(r.amount_micros), period: r.period as BudgetPeriod, alertThresholds: JSON.parse(r.alert_thresholds) as number[],
  createdAt: r.created_at, updatedAt: r.updated_at,
});

const toRow = (b: BudgetRecord): BudgetsTable => ({
  id: b.id, org_id: b.orgId, user_id: b.userId, scope_type: b.scope.type, scope_id: b.scope.id, amount_micros: b.amountMicros,
  period: b.period, alert_thresholds: JSON.stringify(b.alertThresholds), created_at: b.createdAt, updated_at: b.updatedAt,
});

/** Budgets, always read within their organization (another organization's budget is not found). */
export class BudgetsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(budget: BudgetRecord): Promise<void> {
    await this.db.insertInto('budgets').values(toRow(budget)).execute();
  }

  async listByOrg(orgId: string): Promise<BudgetRecord[]> {
    const rows = await this.db.selectFrom('budgets').selectAll().where('org_id', '=', orgId).orderBy('created_at').orderBy('id').execute();
    return rows.map(toRecord);
  }

  async countByOrg(orgId: string): Promise<number> {
    const row = await this.db.selectFrom('budgets').select(sql<string>`count(*)`.as('n')).where('org_id', '=', orgId).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async get(orgId: string, id: string): Promise<BudgetRecord | undefined> {
    const row = await this.db.selectFrom('budgets').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  async update(budget: BudgetRecord): Promise<boolean> {
    const r = toRow(budget);
    const result = await this.db.updateTable('budgets')
      .set({ amount_micros: r.amount_micros, period: r.period, alert_thresholds: r.alert_thresholds, updated_at: r.updated_at })
      .where('org_id', '=', budget.orgId).where('id', '=', budget.id).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(orgId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('budgets').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /**
   * What a scope has spent since `fromDay` (a UTC day, inclusive; '' for all time) in integer micro-dollars,
   * from the usage rows: the organization's members, one member, or one API key. The sandbox environment
   * is never charged to a budget, so its rows do not count.
   */
  async spentMicros(orgId: string, scope: { type: BudgetScopeType; id: string }, fromDay: string): Promise<number> {
    let query = this.db.selectFrom('usage_daily').select(sql<string>`coalesce(sum(cost_micros), 0)`.as('spent'))
      .where('environment', '!=', 'sandbox').where('day', '>=', fromDay);
    if (scope.type === 'organization') query = query.where('user_id', 'in', this.db.selectFrom('users').select('id').where('org_id', '=', orgId));
    else if (scope.type === 'member') query = query.where('user_id', '=', scope.id);
    else query = query.where('api_key_id', '=', scope.id);
    const row = await query.executeTakeFirst();
    return Number(row?.spent ?? 0);
  }
}
