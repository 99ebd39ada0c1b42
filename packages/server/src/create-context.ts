import type { Redis } from 'ioredis';
import type { Config } from './config/load-config.js';
import type { AppContext } from './context.js';
import { MemoryLimitStore } from './limits/memory-limit-store.js';
import { RedisLimitStore } from './limits/redis-limit-store.js';
import { MemoryRevocationStore, RedisRevocationStore } from './limits/revocation-store.js';
import { RateLimiter } from './limits/rate-limiter.js';
import { ApiKeysService } from './modules/api-keys/api-keys-service.js';
import { AuthService } from './modules/auth/auth-service.js';
import { StoreCredentialResolver } from './modules/auth/credential-resolver.js';
import { DbRevocationSource } from './modules/auth/revocation-source.js';
import { CredentialWatch } from './modules/stream/credential-watch.js';
import { KeyRing } from './modules/auth/key-ring.js';
import { PasswordHasher } from './modules/auth/password-hasher.js';
import { PasswordService } from './modules/auth/password-service.js';
import { createMailer } from './modules/mail/mailer.js';
import { createMetrics } from './plugins/metrics.js';
import { migrateToLatest, openDatabase, type DatabaseOptions } from './storage/open-database.js';
import { createStore } from './storage/store.js';
import { createRedisClient } from './storage/redis-client.js';
import { buildModelRegistry } from './providers/build-registry.js';
import { DeploymentsService } from './modules/deployments/deployments-service.js';
import { Admins } from './modules/deployments/admin-guard.js';
import { loadSecretKey, SecretCipher } from './identity/secret-cipher.js';
import { GenerationService } from './modules/generate/generation-service.js';
import { languageCatalog } from './modules/generate/language-catalog.js';
import { StoreUsageMeter } from './modules/usage/usage-meter.js';
import { schedulerLimits, VerificationService } from './modules/verify/verification-service.js';
import { RedisVerifyScheduler } from './modules/verify/redis-verify-scheduler.js';
import { ProjectsService } from './modules/projects/projects-service.js';
import { AgentsService } from './modules/agents/agents-service.js';
import { WorkflowsService } from './modules/workflows/workflows-service.js';
import { RunsService } from './modules/runs/runs-service.js';
import { RunExecutor } from './modules/runs/run-executor.js';
import { atStartup } from './startup-failure.js';
import { createRunEngine } from './modules/runs/create-run-engine.js';
import { BudgetBook } from './modules/budgets/budget-book.js';
import { BudgetsService } from './modules/budgets/budgets-service.js';
import { WebhooksService } from './modules/webhooks/webhooks-service.js';
import { createDeliveryQueue } from './modules/webhooks/create-delivery-queue.js';
import { runWebhooks } from './modules/runs/run-finished.js';
import { SERVER_VERSION } from './plugins/openapi.js';
import { createTracing } from './plugins/tracing.js';
import { ObservedUsageMeter, type LogBodies } from './modules/observability/call-observer.js';
import { LogRetention } from './modules/observability/log-retention.js';
import { observeRuns, observeVerifications, queuedRuns } from './modules/observability/observe.js';
import { LogsService } from './modules/logs/logs-service.js';

export interface ContextOptions {
  /** Storage overrides for tests (a private PostgreSQL schema, an in-memory SQLite file). */
  database?: Pick<DatabaseOptions, 'pgSchema' | 'sqliteFile'>;
  /** Key prefix in Redis, so test suites sharing one Redis do not collide. */
  redisPrefix?: string;
}

export async function createContext(config: Config, options: ContextOptions = {}): Promise<AppContext> {
  const handle = await atStartup(config.databaseUrl ? 'DATABASE_URL' : 'CODELOOM_DATA_DIR', async () => {
    const opened = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, connectTimeoutMs: config.databaseConnectTimeout, statementTimeoutMs: config.databaseStatementTimeout, ...(config.databaseSchema ? { pgSchema: config.databaseSchema } : {}), ...options.database });
    await migrateToLatest(opened).catch(async (error) => { await opened.close(); throw error; });
    return opened;
  });
  const store = createStore(handle);
  const redis: Redis | undefined = config.redisUrl ? await atStartup('REDIS_URL', () => createRedisClient(config.redisUrl!, { commandTimeoutMs: config.redisTimeout })) : undefined;
  const prefix = options.redisPrefix ?? config.redisPrefix;
  const limits = redis ? new RedisLimitStore(redis, prefix) : new MemoryLimitStore();
  const revocationSource = new DbRevocationSource(store, config.accessTokenTtl);
  const revocations = redis ? new RedisRevocationStore(redis, `${prefix}revoked:`, revocationSource) : new MemoryRevocationStore(revocationSource);
  const keyRing = new KeyRing(store.signingKeys, config.tokenIssuer, config.audience);
  await keyRing.init();
  const hasher = new PasswordHasher(config.argon2MemoryKib);
  const auth = new AuthService(store, keyRing, hasher, limits, revocations, config);
  await revocations.restore();
  const credentialWatch = new CredentialWatch(redis, `${prefix}credentials`);
  auth.attachCredentialEvents(credentialWatch);
  const publicUrl = config.publicUrl ?? config.issuer!;
  const mail = createMailer({ smtpUrl: config.smtpUrl, mailFrom: config.mailFrom, publicUrl });
  const passwords = new PasswordService(store, hasher, limits, revocations, credentialWatch, mail, auth, config, publicUrl);
  const rateLimiter = new RateLimiter(limits);
  // Budget alerts and finished runs go to the organization's webhooks, delivered as jobs on the runs' kind of queue.
  const webhooks = new WebhooksService(store, {
    allowPrivate: config.webhookAllowPrivate, retryBaseMs: config.webhookRetryBaseMs, userAgent: `Codeloom-Webhooks/${SERVER_VERSION}`,
    queue: createDeliveryQueue(config, Boolean(redis), prefix, (error) => process.stderr.write(`webhooks queue: ${error instanceof Error ? error.message : String(error)}\n`)),
  });
  // Dollar budgets are reserved and settled with the tokens of every model call (token-spend.ts); their alerts go to the webhooks.
  const budgetBook = new BudgetBook(store, limits, webhooks);
  rateLimiter.spend.attachBudgets(budgetBook);
  const models = await buildModelRegistry(config);
  // Model deployments (CONTRACT §12.4): routed models added to the registry from the database, kept live.
  const deployments = new DeploymentsService({
    store, models, config, limits, redis, prefix, cipher: new SecretCipher(() => secretKeyOf(config), config.secretKeysPrevious ?? []),
    warn: (message) => process.emitWarning(message),
  });
  await deployments.start();
  const admins = new Admins(store.accounts, config.adminEmails ?? []);
  const generation = new GenerationService(store, models, rateLimiter, languageCatalog);
  const projects = new ProjectsService(store);
  generation.attachProjects(projects);
  // Observability (CONTRACT §12.7): the one report of each model call also writes its request-log row, counts
  // the model metrics and ends its span (tracing only with an OTLP endpoint: otherwise undefined, costing nothing).
  const metrics = createMetrics({ token: config.metricsToken });
  const tracing = createTracing({ endpoint: config.otlpEndpoint, tracesEndpoint: config.otlpTracesEndpoint, serviceName: config.otelServiceName, protocol: config.otlpTracesProtocol ?? config.otlpProtocol });
  const usageMeter = new StoreUsageMeter(store.usage, (error) => process.emitWarning(`usage not recorded: ${String(error)}`));
  generation.attachUsage(new ObservedUsageMeter(usageMeter, {
    logs: config.logCalls ? store.requestLogs : undefined, bodies: config.logBodies as LogBodies, metrics: metrics.model, tracing,
    onError: (error) => process.emitWarning(`request log not written: ${String(error)}`),
  }));
  const logRetention = new LogRetention(store.requestLogs, { days: config.logRetentionDays, redis, lockKey: `${prefix}log-retention`, onError: (error) => process.emitWarning(`request log retention: ${String(error)}`) });
  logRetention.start();
  // With Redis, the per-organization verification caps hold across every instance (redis-verify-scheduler.ts).
  const verification = new VerificationService(config, redis ? new RedisVerifyScheduler(redis, schedulerLimits(config), { prefix }) : undefined);
  observeVerifications(verification, metrics.model, tracing);
  generation.attachVerifier(verification);
  const agents = new AgentsService(store, models);
  const workflows = new WorkflowsService(store, models);
  const { engine, events: runEvents } = createRunEngine(config, redis, prefix);
  const runs = new RunsService(store, agents, workflows, generation, projects, new RunExecutor(store, models, generation, projects, runEvents, observeRuns(runWebhooks(webhooks), metrics.model), { tracing }), engine, runEvents, observeRuns(runWebhooks(webhooks), metrics.model));
  metrics.sources.runQueueDepth = queuedRuns(store.handle.db);
  metrics.sources.wsConnections = () => credentialWatch.connections;
  metrics.sources.deployments = () => deployments.healthList().map(({ id, name, health }) => ({ id, name, up: health.status() === 'ok', consecutiveFailures: health.consecutiveFailures }));
  return {
    config,
    store,
    ...(redis ? { redis } : {}),
    limits,
    revocations,
    keyRing,
    auth,
    passwords,
    mail,
    credentials: new StoreCredentialResolver(store, keyRing, revocations),
    apiKeys: new ApiKeysService(store, revocations, credentialWatch, admins),
    rateLimiter,
    metrics,
    ...(tracing ? { tracing } : {}),
    logs: new LogsService(store.requestLogs),
    logRetention,
    models,
    generation,
    projects,
    agents,
    workflows,
    runs,
    runEvents,
    credentialWatch,
    webhooks,
    budgets: new BudgetsService(store, budgetBook),
    deployments,
    admins,
  };
}

export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.logRetention.stop();
  await ctx.runs.close();
  // After the runs (the last of them may have just ended): events being recorded are written, attempts in progress end.
  await ctx.webhooks.close();
  await ctx.runEvents.close();
  await ctx.credentialWatch.close();
  await ctx.deployments.close();
  await ctx.passwords.close();
  await ctx.mail.close();
  await ctx.models.close();
  await ctx.generation.verification?.close();
  await ctx.limits.close();
  await ctx.revocations.close();
  if (ctx.redis) await ctx.redis.quit().catch(() => ctx.redis?.disconnect());
  await ctx.store.handle.close();
  // Last: the spans of everything above are exported before the process goes.
  await ctx.tracing?.shutdown().catch(() => {});
}

/**
 * The key deployments' API keys are sealed with, asked for the first time one is sealed or opened: CODELOOM_SECRET_KEY, else
 * one made and kept in the data directory (with a warning, once: instances sharing a database must share one key).
 */
function secretKeyOf(config: Config): string {
  const secret = loadSecretKey(config.secretKey, config.dataDir);
  if (secret.generated) process.emitWarning(`CODELOOM_SECRET_KEY is not set: deployments' API keys are encrypted with the key kept in ${secret.generated}. Instances sharing a database must share one key: set CODELOOM_SECRET_KEY on every instance.`, { code: 'CODELOOM_SECRET_KEY' });
  return secret.key;
}

