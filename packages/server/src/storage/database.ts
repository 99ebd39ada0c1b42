import type { Generated } from 'kysely';

/** Table shapes as Kysely sees them. Timestamps are RFC 3339 UTC strings on both dialects; lists are JSON text. */
export interface OrganizationsTable { id: string; name: string; plan: string; created_at: string }
export interface UsersTable {
  id: string; email: string; email_normalized: string; name: string; password_hash: string;
  org_id: string; created_at: string;
  /** 1 for an instance administrator (CONTRACT §12.4); defaults to 0. */
  is_admin: Generated<number>;
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
  requests_per_minute?: number | null; tokens_per_minute?: number | null; monthly_tokens?: number | string | null;
}
/** Model calls per account, environment, API key ('' for none), model and UTC day (YYYY-MM-DD); counts only ever grow. */
export interface UsageDailyTable {
  user_id: string; environment: string; api_key_id: string; model: string; day: string;
  requests: number | string; failed_requests: number | string; prompt_tokens: number | string; completion_tokens: number | string;
  /** Integer micro-dollars (0 on rows from before prices, migration 0008). */
  cost_micros: number | string;
}
/** A budget in integer micro-dollars (migration 0009); `alert_thresholds` is a JSON array of fractions. */
export interface BudgetsTable {
  id: string; org_id: string; user_id: string; scope_type: string; scope_id: string; amount_micros: number | string;
  period: string; alert_thresholds: string; created_at: string; updated_at: string;
}
/** An organization's webhook (migration 0010). `events` is a JSON array; `secret` signs deliveries, so it is kept as it is (never returned after creation, never logged). */
export interface WebhooksTable { id: string; user_id: string; url: string; events: string; description: string; secret: string; created_at: string }
/** One event sent to one webhook: the exact body, and where its delivery stands (pending | succeeded | failed). */
export interface WebhookDeliveriesTable {
  id: string; webhook_id: string; event_id: string; event_type: string; body: string; status: string; attempts: number;
  response_status: number | null; last_error: string | null; next_attempt_at: string | null; created_at: string; delivered_at: string | null;
}
/** A stored Responses API answer (migration 0013): the `response` object and the conversation it ends, both JSON. */
export interface ResponsesTable { id: string; org_id: string; user_id: string; environment: string; response: string; conversation: string; created_at: string; expires_at: string }
/** A model back-end (CONTRACT §12.4); `models` is JSON, `api_key_enc` the encrypted key (identity/secret-cipher.ts). */
export interface DeploymentsTable {
  id: string; name: string; provider: string; base_url: string; api_key_enc: string | null; models: string;
  weight: number; rpm: number | null; tpm: number | null; enabled: number; created_at: string; updated_at: string;
}
export interface SigningKeysTable { kid: string; alg: string; private_jwk: string; public_jwk: string; created_at: string }

export interface GenerationsTable {
  id: string; user_id: string; environment: string; project_id: string | null; model: string; language: string;
  prompt: string; request: string; output: string; files: string; code: string;
  prompt_tokens: number; completion_tokens: number; processing_ms: number; finish_reason: string; created_at: string;
  /** Integer micro-dollars (0 on rows from before prices, migration 0008). */
  cost_micros: number | string;
}

export interface ProjectsTable {
  id: string; user_id: string; environment: string; name: string; description: string; template: string | null;
  created_at: string; updated_at: string;
}
export interface ProjectFilesTable { project_id: string; path: string; content: string; size: number; updated_at: string }
/** A change set to a project's files (migration 0016), numbered from 1 per project. */
export interface ProjectRevisionsTable { id: string; project_id: string; number: number; message: string; author_id: string | null; author_name: string | null; files_changed: number; created_at: string }
/** One file a revision touched: its content after the change (null when deleted). */
export interface ProjectRevisionFilesTable { revision_id: string; project_id: string; number: number; path: string; status: string; content: string | null }

export interface OwnedDocumentsTable { id: string; user_id: string; environment: string; name: string; data: string; created_at: string }
export interface RunsTable {
  id: string; user_id: string; environment: string; workflow_id: string | null; agent_id: string | null; project_id: string | null;
  status: string; task: string; requirements: string; spec: string; steps: string; result: string | null; tokens_used: number;
  error: string | null; created_at: string; started_at: string | null; finished_at: string | null;
  /** The API key the run was started with (its steps are charged to it); null for a session or OAuth token. */
  api_key_id: string | null;
  /** JSON `{code, message, until}` while the run waits before a step (a window or budget refused it for now); null otherwise (migration 0011). */
  waiting: string | null;
}

/** OAuth 2.0: registered clients, their short-lived codes, grants (one per code exchange: a refresh-token family) and tokens. Secrets only as SHA-256. */
export interface OAuthClientsTable {
  id: string; user_id: string; name: string; type: string; secret_hash: string | null; redirect_uris: string; scopes: string; created_at: string;
}
export interface OAuthCodesTable {
  code_hash: string; client_id: string; user_id: string; redirect_uri: string; scopes: string;
  code_challenge: string | null; code_challenge_method: string | null;
  created_at: string; expires_at: string; used_at: string | null; replayed_at: string | null;
}
export interface OAuthGrantsTable {
  id: string; client_id: string; user_id: string; code_hash: string | null; scopes: string;
  created_at: string; revoked_at: string | null; revoked_reason: string | null;
}
export interface OAuthTokensTable {
  token_hash: string; grant_id: string; kind: string; scopes: string;
  created_at: string; expires_at: string; used_at: string | null; revoked_at: string | null;
}
/** Password reset tokens, stored as SHA-256; each good once, until expires_at. */
export interface PasswordResetsTable { token_hash: string; user_id: string; created_at: string; expires_at: string; used_at: string | null }
/** Browser sessions of the sign-in and consent pages (cookie value stored as SHA-256). */
export interface WebSessionsTable { token_hash: string; user_id: string; created_at: string; expires_at: string }

/** One model call (CONTRACT §12.7), kept CODELOOM_LOG_RETENTION_DAYS; ids are time-ordered (`log_` + time + random). */
export interface RequestLogsTable {
  id: string; at: string; organization_id: string; user_id: string; api_key_id: string | null; route: string; model: string;
  deployment_id: string | null; status: string; error_code: string | null; http_status: number; prompt_tokens: number;
  completion_tokens: number; cost_micros: number; latency_ms: number; ttft_ms: number | null; queued_ms: number;
  fallback_from: string | null; request_id: string | null; stream: number; request_body: string | null; response_body: string | null;
}

export interface Database {
  request_logs: RequestLogsTable;
  agents: OwnedDocumentsTable;
  workflows: OwnedDocumentsTable;
  runs: RunsTable;
  projects: ProjectsTable;
  project_files: ProjectFilesTable;
  project_revisions: ProjectRevisionsTable;
  project_revision_files: ProjectRevisionFilesTable;
  generations: GenerationsTable;
  organizations: OrganizationsTable;
  users: UsersTable;
  sessions: SessionsTable;
  refresh_tokens: RefreshTokensTable;
  api_keys: ApiKeysTable;
  usage_daily: UsageDailyTable;
  budgets: BudgetsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  responses: ResponsesTable;
  deployments: DeploymentsTable;
  signing_keys: SigningKeysTable;
  oauth_clients: OAuthClientsTable;
  oauth_codes: OAuthCodesTable;
  oauth_grants: OAuthGrantsTable;
  oauth_tokens: OAuthTokensTable;
  web_sessions: WebSessionsTable;
  password_resets: PasswordResetsTable;
}
