import type { Kysely } from 'kysely';

/**
 * Password reset tokens (POST /api/v1/auth/password-reset, docs/api.md): only the SHA-256 of each token is
 * kept. A token is good once (`used_at`) and until `expires_at` (CODELOOM_PASSWORD_RESET_TTL after it was
 * made); redeeming one also uses up every other token of the account. A new request drops the account's used
 * and expired rows; rows go with their account.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('password_resets')
    .addColumn('token_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('used_at', 'varchar(40)')
    .execute();
  await db.schema.createIndex('password_resets_user').on('password_resets').column('user_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('password_resets').ifExists().execute();
}
