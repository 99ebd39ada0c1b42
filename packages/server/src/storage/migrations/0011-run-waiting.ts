import type { Kysely } from 'kysely';

/**
 * A run's `waiting` (JSON `{code, message, until}`): set while it waits before a step because a tokens-per-minute
 * window or a budget refused it for now, so GET /runs/{id} shows it; null otherwise. Runs from before read null.
 * (The run ceilings themselves live in the run's spec, and its cost is the sum of its steps'.)
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').addColumn('waiting', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('waiting').execute();
}
