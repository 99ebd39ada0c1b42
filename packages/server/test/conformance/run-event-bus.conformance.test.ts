/**
 * The run-event bus conformance suite on both buses: in memory (one
 * instance) and Redis Streams (several instances; runs when TEST_REDIS_URL
 * is set, says it skipped otherwise). Each Redis instance has its own
 * connection, as two servers would, under a key prefix of this run's own.
 */
import { Redis } from 'ioredis';
import { MemoryRunEventBus, RedisRunEventBus, type RunEventBus } from '../../src/modules/runs/run-events.js';
import { runEventBusConformance } from './run-event-bus-cases.js';

const REDIS = process.env.TEST_REDIS_URL;

runEventBusConformance('in-memory', {
  shared: false,
  async start() {
    const buses: RunEventBus[] = [];
    return {
      async open() {
        const bus = new MemoryRunEventBus();
        buses.push(bus);
        return bus;
      },
      async close() {
        await Promise.all(buses.map((bus) => bus.close()));
      },
    };
  },
});

runEventBusConformance('Redis Streams', {
  shared: true,
  unavailable: REDIS ? undefined : 'TEST_REDIS_URL is not set',
  async start() {
    const prefix = `test:bus-conformance:${process.pid}:${Date.now().toString(36)}:runs:`;
    const instances: Array<{ redis: Redis; bus: RunEventBus }> = [];
    const admin = new Redis(REDIS!);
    return {
      async open() {
        const redis = new Redis(REDIS!);
        const bus = new RedisRunEventBus(redis, prefix);
        instances.push({ redis, bus });
        await bus.ready();
        return bus;
      },
      async keptFor(runId) {
        return Math.min(await admin.ttl(`${prefix}seq:${runId}`), await admin.ttl(`${prefix}log:${runId}`));
      },
      async close() {
        for (const { redis, bus } of instances) {
          await bus.close();
          await redis.quit();
        }
        const keys = await admin.keys(`${prefix}*`);
        if (keys.length > 0) await admin.del(...keys);
        await admin.quit();
      },
    };
  },
});
