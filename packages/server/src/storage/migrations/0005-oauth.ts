import type { Kysely } from 'kysely';

/** OAuth 2.0 clients, codes, grants and tokens, and the browser sessions of the sign-in pages. Deleting a client or a user cascades to everything it issued. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('oauth_clients')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('type', 'varchar(20)', (c) => c.notNull())
    .addColumn('secret_hash', 'varchar(64)')
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth_clients_owner').on('oauth_clients').columns(['user_id', 'created_at']).execute();

  await db.schema.createTable('oauth_codes')
    .addColumn('code_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('client_id', 'varchar(40)', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'varchar(128)')
    .addColumn('code_challenge_method', 'varchar(10)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('used_at', 'varchar(40)')
    .addColumn('replayed_at', 'varchar(40)')
    .execute();
  await db.schema.createIndex('oauth_codes_expiry').on('oauth_codes').column('expires_at').execute();

  await db.schema.createTable('oauth_grants')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('client_id', 'varchar(40)', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'varchar(64)')
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('revoked_at', 'varchar(40)')
    .addColumn('revoked_reason', 'varchar(40)')
    .execute();
  await db.schema.createIndex('oauth_grants_code').on('oauth_grants').column('code_hash').execute();
  await db.schema.createIndex('oauth_grants_client').on('oauth_grants').column('client_id').execute();

  await db.schema.createTable('oauth_tokens')
    .addColumn('token_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('grant_id', 'varchar(40)', (c) => c.notNull().references('oauth_grants.id').onDelete('cascade'))
    .addColumn('kind', 'varchar(10)', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('used_at', 'varchar(40)')
    .addColumn('revoked_at', 'varchar(40)')
    .execute();
  await db.schema.createIndex('oauth_tokens_grant').on('oauth_tokens').column('grant_id').execute();
  await db.schema.createIndex('oauth_tokens_expiry').on('oauth_tokens').column('expires_at').execute();

  await db.schema.createTable('web_sessions')
    .addColumn('token_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('web_sessions_expiry').on('web_sessions').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['web_sessions', 'oauth_tokens', 'oauth_grants', 'oauth_codes', 'oauth_clients']) await db.schema.dropTable(t).ifExists().execute();
}
