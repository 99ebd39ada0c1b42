import type { Kysely } from 'kysely';

/**
 * Budgets in US dollars (CONTRACT §12.2): per organization, member or API key, by day, month or in total.
 * Amounts are integer micro-dollars. What a budget has spent is not stored here: it is the usage rows' cost
 * over the period (a counter in the LimitStore while the server runs, rebuilt from usage_daily after a restart).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('budgets')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('org_id', 'varchar(40)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    // The account that owns the organization (whose webhooks hear the budget's alerts).
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('scope_type', 'varchar(20)', (c) => c.notNull())
    .addColumn('scope_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('amount_micros', 'bigint', (c) => c.notNull())
    .addColumn('period', 'varchar(10)', (c) => c.notNull())
    .addColumn('alert_thresholds', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('budgets_org').on('budgets').columns(['org_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('budgets').ifExists().execute();
}
