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

export interface ContextOptions {
  /** Storage overrides for tests (a private PostgreSQL schema, an in-memory SQLite file). */
  database?: Pick<DatabaseOptions, 'pgSchema' | 'sqliteFile'>;
  /** Key prefix in Redis, so test suites sharing one Redis do not collide. */
  redisPrefix?: string;
}

export async function createContext(config: Config, options: ContextOptions = {}): Promise<AppContext> {
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...options.database });
  await migrateToLatest(handle.db);
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
    rateLimiter: new RateLimiter(limits),
    metrics: createMetrics(),
  };
}

export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.limits.close();
  await ctx.revocations.close();
  if (ctx.redis) await ctx.redis.quit().catch(() => ctx.redis?.disconnect());
  await ctx.store.handle.close();
}
