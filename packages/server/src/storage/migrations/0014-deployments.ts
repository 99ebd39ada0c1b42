import type { Kysely } from 'kysely';

/**
 * Administrators and model deployments (CONTRACT §12.4). `users.is_admin` marks instance administrators (the
 * first account of an empty database, and those granted with `codeloom admin grant`). A deployment is one
 * model back-end: its API key is stored encrypted (identity/secret-cipher.ts: `v1.<key id>.<iv>.<tag>.<data>`),
 * its models as JSON (id, upstream name, capabilities, price).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.createTable('deployments')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('provider', 'varchar(20)', (c) => c.notNull())
    .addColumn('base_url', 'text', (c) => c.notNull())
    .addColumn('api_key_enc', 'text')
    .addColumn('models', 'text', (c) => c.notNull())
    .addColumn('weight', 'integer', (c) => c.notNull())
    .addColumn('rpm', 'integer')
    .addColumn('tpm', 'integer')
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('deployments').ifExists().execute();
  await db.schema.alterTable('users').dropColumn('is_admin').execute();
}
