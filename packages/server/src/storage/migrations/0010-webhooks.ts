import type { Kysely } from 'kysely';

/**
 * Webhooks (CONTRACT §12.2): an organization's endpoints and the log of what was sent to each. The secret is
 * kept as it is (it signs every delivery, so it cannot be hashed); it is returned once, at creation, and
 * never logged. A delivery row holds the exact body sent and is the truth the delivery jobs follow.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('webhooks')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('url', 'varchar(2048)', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('secret', 'varchar(100)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_owner').on('webhooks').columns(['user_id', 'created_at']).execute();
  await db.schema.createTable('webhook_deliveries')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('webhook_id', 'varchar(40)', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('event_type', 'varchar(40)', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'varchar(20)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('next_attempt_at', 'varchar(40)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('delivered_at', 'varchar(40)')
    .execute();
  // A webhook's recent deliveries (newest first), and the pending ones that are due.
  await db.schema.createIndex('webhook_deliveries_recent').on('webhook_deliveries').columns(['webhook_id', 'created_at']).execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['webhook_deliveries', 'webhooks']) await db.schema.dropTable(t).ifExists().execute();
}
