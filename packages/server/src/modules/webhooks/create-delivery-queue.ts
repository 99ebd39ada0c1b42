import type { Config } from '../../config/load-config.js';
import { BullDeliveryQueue } from './bullmq-delivery-queue.js';
import { InProcessDeliveryQueue, type DeliveryQueue } from './delivery-queue.js';

/** Attempts in progress at once on one instance. */
const CONCURRENCY = 8;

/** Deliveries go on the run engine's kind of queue: BullMQ when Redis is configured, timers in this process otherwise. */
export function createDeliveryQueue(config: Config, hasRedis: boolean, prefix: string, onError: (error: unknown) => void): DeliveryQueue {
  if (!hasRedis || !config.redisUrl) return new InProcessDeliveryQueue(CONCURRENCY, onError);
  return new BullDeliveryQueue({ redisUrl: config.redisUrl, prefix, concurrency: CONCURRENCY, onError });
}
