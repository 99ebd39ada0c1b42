import { Redis, type RedisOptions } from 'ioredis';

export interface RedisClientSettings {
  /** Longest a command on a request path may take, in ms (then it fails and the request answers 503). */
  commandTimeoutMs: number;
}

/**
 * Background connections (subscribers, workers): commands wait in the
 * offline queue across a reconnect and have no timeout, which is what a
 * long-lived subscription wants and a request must never get.
 */
const BACKGROUND: RedisOptions = { enableOfflineQueue: true, commandTimeout: undefined, maxRetriesPerRequest: null };

/**
 * The request-path client: fail closed and fast. While Redis is unreachable
 * every command fails at once (no offline queue, no retries), a command that
 * gets no answer fails after `commandTimeoutMs`, and the client keeps
 * reconnecting in the background, so service resumes by itself when Redis
 * is back. `duplicate()` gives a background connection (see BACKGROUND)
 * unless told otherwise.
 */
export class FailFastRedis extends Redis {
  override duplicate(override?: Partial<RedisOptions>): Redis {
    const copy = super.duplicate({ ...BACKGROUND, ...override });
    // Outages are reported by /readyz and the failed commands; ioredis would otherwise print every reconnect attempt.
    copy.on('error', () => {});
    return copy;
  }

  /**
   * A command that timed out means Redis is hung (stopped, overloaded, a
   * dead link): reconnect, so the commands after it fail at once instead of
   * each waiting out its own timeout. Reconnection completes when Redis
   * answers again.
   */
  override sendCommand(...args: Parameters<Redis['sendCommand']>): unknown {
    const [command] = args;
    command.promise.catch((error: unknown) => {
      if (error instanceof Error && error.message === 'Command timed out' && this.status === 'ready') this.disconnect(true);
    });
    return super.sendCommand(...args);
  }
}

export async function createRedisClient(url: string, settings: RedisClientSettings): Promise<FailFastRedis> {
  const redis = new FailFastRedis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: settings.commandTimeoutMs,
    connectTimeout: 2_000,
    // Reconnect forever, at most a second apart, so a returning Redis is picked up within about a second.
    retryStrategy: (attempt) => Math.min(50 * attempt, 1_000),
  });
  // Errors also reach the callers of the failed commands; without a listener ioredis would log each reconnect attempt.
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => { lastError = error; });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw lastError ?? error;
  }
  return redis;
}
