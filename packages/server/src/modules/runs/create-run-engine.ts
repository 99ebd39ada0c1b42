import type { Redis } from 'ioredis';
import type { Config } from '../../config/load-config.js';
import { BullRunEngine } from './bullmq-run-engine.js';
import { InProcessRunEngine, type RunEngine } from './run-engine.js';
import { MemoryRunEventBus, RedisRunEventBus, type RunEventBus } from './run-events.js';

/** BullMQ and Redis Streams when Redis is configured (several instances); the in-process queue and memory otherwise. */
export function createRunEngine(config: Config, redis: Redis | undefined, prefix: string): { engine: RunEngine; events: RunEventBus } {
  if (!redis || !config.redisUrl) {
    return { engine: new InProcessRunEngine(config.runsPerAccount, config.runsTotal), events: new MemoryRunEventBus() };
  }
  return {
    engine: new BullRunEngine({
      redisUrl: config.redisUrl, prefix, perAccount: config.runsPerAccount, concurrency: config.runsTotal, leaseSeconds: config.runLease,
      onError: (error) => process.stderr.write(`runs engine: ${error instanceof Error ? error.message : String(error)}\n`),
    }),
    events: new RedisRunEventBus(redis, `${prefix}runs:`),
  };
}
