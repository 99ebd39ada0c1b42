import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { StreamEvent } from '@codeloom/protocol';

export type RunEventListener = (event: StreamEvent) => void;

/**
 * Live run events. In one process an EventEmitter is enough; with Redis,
 * events are published on a channel so a client subscribed through any
 * instance sees a run executing on any other.
 */
export interface RunEventBus {
  publish(runId: string, event: StreamEvent): void;
  listen(runId: string, listener: RunEventListener): () => void;
  close(): Promise<void>;
}

export class MemoryRunEventBus implements RunEventBus {
  protected readonly emitter = new EventEmitter();
  constructor() { this.emitter.setMaxListeners(0); }

  publish(runId: string, event: StreamEvent): void {
    this.emitter.emit(runId, event);
  }

  listen(runId: string, listener: RunEventListener): () => void {
    this.emitter.on(runId, listener);
    return () => this.emitter.off(runId, listener);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

export class RedisRunEventBus extends MemoryRunEventBus {
  private readonly subscriber: Redis;
  private readonly ready: Promise<unknown>;

  constructor(private readonly redis: Redis, private readonly channelPrefix: string) {
    super();
    this.subscriber = redis.duplicate();
    this.subscriber.on('pmessage', (_pattern, channel: string, message: string) => {
      const runId = channel.slice(this.channelPrefix.length);
      try { this.emitter.emit(runId, JSON.parse(message) as StreamEvent); } catch { /* not ours */ }
    });
    this.ready = this.subscriber.psubscribe(`${channelPrefix}*`);
  }

  override publish(runId: string, event: StreamEvent): void {
    void this.redis.publish(this.channelPrefix + runId, JSON.stringify(event)).catch(() => super.publish(runId, event));
  }

  override listen(runId: string, listener: RunEventListener): () => void {
    void this.ready;
    return super.listen(runId, listener);
  }

  override async close(): Promise<void> {
    await super.close();
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
  }
}
