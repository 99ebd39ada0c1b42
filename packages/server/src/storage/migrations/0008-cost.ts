import type { Kysely } from 'kysely';

/**
 * What model calls cost (CONTRACT §12.2), in integer micro-dollars: summed into each usage row, and kept with
 * each generation. Rows written before prices existed read as 0 (the default fills them).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('usage_daily').addColumn('cost_micros', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('generations').addColumn('cost_micros', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('usage_daily').dropColumn('cost_micros').execute();
  await db.schema.alterTable('generations').dropColumn('cost_micros').execute();
}
