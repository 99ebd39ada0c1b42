import type { Redis } from 'ioredis';
import type { Config } from './config/load-config.js';
import type { Store } from './storage/store.js';
import type { LimitStore } from './limits/limit-store.js';
import type { RevocationStore } from './limits/revocation-store.js';
import type { KeyRing } from './modules/auth/key-ring.js';
import type { AuthService } from './modules/auth/auth-service.js';
import type { CredentialResolver } from './identity/credentials.js';
import type { ApiKeysService } from './modules/api-keys/api-keys-service.js';
import type { RateLimiter } from './limits/rate-limiter.js';
import type { Metrics } from './plugins/metrics.js';
import type { ModelRegistry } from './providers/model-registry.js';
import type { GenerationService } from './modules/generate/generation-service.js';
import type { ProjectsService } from './modules/projects/projects-service.js';
import type { AgentsService } from './modules/agents/agents-service.js';
import type { WorkflowsService } from './modules/workflows/workflows-service.js';
import type { RunsService } from './modules/runs/runs-service.js';
import type { RunEventBus } from './modules/runs/run-events.js';
import type { CredentialWatch } from './modules/stream/credential-watch.js';
import type { WebhooksService } from './modules/webhooks/webhooks-service.js';
import type { BudgetsService } from './modules/budgets/budgets-service.js';
import type { DeploymentsService } from './modules/deployments/deployments-service.js';
import type { Admins } from './modules/deployments/admin-guard.js';
import type { Tracing } from './plugins/tracing.js';
import type { LogsService } from './modules/logs/logs-service.js';
import type { LogRetention } from './modules/observability/log-retention.js';
import type { PasswordService } from './modules/auth/password-service.js';
import type { Mailer } from './modules/mail/mailer.js';

/**
 * Everything the routes need, built once in buildApp and closed in reverse on
 * shutdown. Only the composition root (app.ts, create-context.ts) sees it:
 * each routes factory is handed the few services it names.
 */
export interface AppContext {
  config: Config;
  store: Store;
  redis?: Redis;
  limits: LimitStore;
  revocations: RevocationStore;
  keyRing: KeyRing;
  auth: AuthService;
  /** Password change and reset (CONTRACT §12.5). */
  passwords: PasswordService;
  /** Outgoing mail (CODELOOM_SMTP_URL): reset links, later invitations. */
  mail: Mailer;
  credentials: CredentialResolver;
  apiKeys: ApiKeysService;
  rateLimiter: RateLimiter;
  metrics: Metrics;
  models: ModelRegistry;
  generation: GenerationService;
  projects: ProjectsService;
  agents: AgentsService;
  workflows: WorkflowsService;
  runs: RunsService;
  runEvents: RunEventBus;
  /** Open WebSocket connections by account, told of revocations on every instance. */
  credentialWatch: CredentialWatch;
  /** An organization's webhooks, and the events (runs, budgets) emitted to them. */
  webhooks: WebhooksService;
  budgets: BudgetsService;
  /** Model deployments (CONTRACT §12.4) and the routed models they make in `models`. */
  deployments: DeploymentsService;
  /** Instance administrators (admin routes). */
  admins: Admins;
  /** OpenTelemetry, when an OTLP endpoint is configured. */
  tracing?: Tracing;
  /** The request log (GET /api/v1/logs) and its retention job. */
  logs: LogsService;
  logRetention: LogRetention;
}
