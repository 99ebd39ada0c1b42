/** Table shapes as Kysely sees them. Timestamps are RFC 3339 UTC strings on both dialects; lists are JSON text. */
export interface OrganizationsTable { id: string; name: string; plan: string; created_at: string }
export interface UsersTable {
  id: string; email: string; email_normalized: string; name: string; password_hash: string;
  org_id: string; created_at: string;
}
export interface SessionsTable {
  id: string; user_id: string; environment: string; created_at: string; expires_at: string;
  revoked_at: string | null; revoked_reason: string | null;
}
export interface RefreshTokensTable {
  token_hash: string; session_id: string; created_at: string; expires_at: string; used_at: string | null;
}
export interface ApiKeysTable {
  id: string; user_id: string; name: string; prefix: string; key_hash: string; scopes: string;
  environment: string; created_at: string; last_used_at: string | null; expires_at: string | null; revoked_at: string | null;
}
export interface SigningKeysTable { kid: string; alg: string; private_jwk: string; public_jwk: string; created_at: string }

export interface Database {
  organizations: OrganizationsTable;
  users: UsersTable;
  sessions: SessionsTable;
  refresh_tokens: RefreshTokensTable;
  api_keys: ApiKeysTable;
  signing_keys: SigningKeysTable;
}
