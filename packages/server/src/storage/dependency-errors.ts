import { AppError, retryAfterHeader } from '../errors.js';

/** A shared service a request may need. */
export type Dependency = 'redis' | 'database';

const REDIS_MESSAGES = [/Stream isn't writeable/, /Command timed out/, /Connection is closed/, /Reached the max retries per request limit/, /LOADING /, /READONLY /, /MASTERDOWN/, /CLUSTERDOWN/];
const PG_MESSAGES = [/Connection terminated/, /timeout exceeded when trying to connect/, /Client has encountered a connection error/, /Client was closed and is not queryable/, /Cannot use a pool after calling end/, /the database system is (starting up|shutting down|in recovery mode)/];
/** SQLSTATE classes 08 (connection exception), 53 (insufficient resources), 57P0x (operator intervention), 57014 (statement timeout). */
const PG_CODES = /^(08...|53...|57P0.|57014)$/;
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Which dependency an error says is down, if any: Redis unreachable or too
 * slow (ioredis fails at once while disconnected and after the command
 * timeout), PostgreSQL refusing, dropping or timing out connections, SQLite busy.
 */
export function dependencyDown(error: unknown): Dependency | undefined {
  if (!(error instanceof Error) || error instanceof AppError) return undefined;
  const { message, name } = error;
  const code = (error as { code?: unknown }).code;
  if (name === 'MaxRetriesPerRequestError' || REDIS_MESSAGES.some((re) => re.test(message))) return 'redis';
  if (typeof code === 'string' && (PG_CODES.test(code) || code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED')) return 'database';
  if (PG_MESSAGES.some((re) => re.test(message))) return 'database';
  if (typeof code === 'string' && SOCKET_CODES.has(code)) return /redis/i.test(error.stack ?? '') ? 'redis' : 'database';
  return undefined;
}

const NAMES: Record<Dependency, string> = { redis: 'Redis', database: 'The database' };

/** The 503 a request gets when a dependency it needs is down: at once, with a hint to retry shortly. */
export function unavailable(dependency: Dependency): AppError {
  return new AppError('service_unavailable', `${NAMES[dependency]} is unreachable; try again shortly.`, { headers: retryAfterHeader(1) });
}

/** AppErrors pass through; a dependency failure becomes its 503; anything else is undefined (a real bug). */
export function asDependencyError(error: unknown): AppError | undefined {
  const down = dependencyDown(error);
  return down ? unavailable(down) : undefined;
}

/** Rejects with a dependency error when `work` takes longer than `ms` (for probes: they must answer fast). */
export function withTimeout<T>(work: Promise<T>, ms: number, dependency: Dependency): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(unavailable(dependency)), ms); });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
