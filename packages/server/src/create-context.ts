import { Redis } from 'ioredis';
import type { Config } from './config/load-config.js';
import type { AppContext } from './context.js';
import { MemoryLimitStore } from './limits/memory-limit-store.js';
import { RedisLimitStore } from './limits/redis-limit-store.js';
import { MemoryRevocationStore, RedisRevocationStore } from './limits/revocation-store.js';
import { RateLimiter } from './limits/rate-limiter.js';
import { ApiKeysService } from './modules/api-keys/api-keys-service.js';
import { AuthService } from './modules/auth/auth-service.js';
import { CredentialResolver } from './modules/auth/credential-resolver.js';
import { KeyRing } from './modules/auth/key-ring.js';
import { PasswordHasher } from './modules/auth/password-hasher.js';
import { createMetrics } from './plugins/metrics.js';
import { migrateToLatest, openDatabase, type DatabaseOptions } from './storage/open-database.js';
import { createStore } from './storage/store.js';
import { buildModelRegistry } from './providers/build-registry.js';
import { GenerationService } from './modules/generate/generation-service.js';
import { languageCatalog } from './modules/generate/language-catalog.js';
import { VerificationService } from './modules/verify/verification-service.js';
import { ProjectsService } from './modules/projects/projects-service.js';
import { AgentsService } from './modules/agents/agents-service.js';
import { RunsService } from './modules/runs/runs-service.js';
import { RunExecutor } from './modules/runs/run-executor.js';
import { RunQueue } from './modules/runs/run-queue.js';
import { MemoryRunEventBus, RedisRunEventBus } from './modules/runs/run-events.js';

export interface ContextOptions {
  /** Storage overrides for tests (a private PostgreSQL schema, an in-memory SQLite file). */
  database?: Pick<DatabaseOptions, 'pgSchema' | 'sqliteFile'>;
  /** Key prefix in Redis, so test suites sharing one Redis do not collide. */
  redisPrefix?: string;
}

export async function createContext(config: Config, options: ContextOptions = {}): Promise<AppContext> {
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...(config.databaseSchema ? { pgSchema: config.databaseSchema } : {}), ...options.database });
  await migrateToLatest(handle);
  const store = createStore(handle);
  let redis: Redis | undefined;
  if (config.redisUrl) {
    redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: true });
    await redis.connect();
  }
  const prefix = options.redisPrefix ?? 'codeloom:';
  const limits = redis ? new RedisLimitStore(redis, prefix) : new MemoryLimitStore();
  const revocations = redis ? new RedisRevocationStore(redis, `${prefix}revoked:`) : new MemoryRevocationStore();
  const keyRing = new KeyRing(store.signingKeys, config.issuer!, config.audience);
  await keyRing.init();
  const auth = new AuthService(store, keyRing, new PasswordHasher(config.argon2MemoryKib), limits, revocations, config);
  await auth.restoreRevocations();
  const rateLimiter = new RateLimiter(limits);
  const models = await buildModelRegistry(config);
  const generation = new GenerationService(store, models, rateLimiter, languageCatalog);
  const projects = new ProjectsService(store);
  generation.attachProjects(projects);
  generation.attachVerifier(new VerificationService(config));
  const agents = new AgentsService(store, models);
  const runEvents = redis ? new RedisRunEventBus(redis, `${prefix}run-events:`) : new MemoryRunEventBus();
  const runs = new RunsService(store, agents, generation, projects, new RunExecutor(store, models, generation, projects, runEvents), new RunQueue(config.runsPerAccount, config.runsTotal), runEvents);
  return {
    config,
    store,
    ...(redis ? { redis } : {}),
    limits,
    revocations,
    keyRing,
    auth,
    credentials: new CredentialResolver(store, keyRing, revocations),
    apiKeys: new ApiKeysService(store, revocations),
    rateLimiter,
    metrics: createMetrics(),
    models,
    generation,
    projects,
    agents,
    runs,
    runEvents,
  };
}

export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.runs.shutdown();
  await ctx.runEvents.close();
  await ctx.models.close();
  await ctx.limits.close();
  await ctx.revocations.close();
  if (ctx.redis) await ctx.redis.quit().catch(() => ctx.redis?.disconnect());
  await ctx.store.handle.close();
}
