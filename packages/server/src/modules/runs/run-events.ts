import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { StreamEvent } from '@codeloom/protocol';

/** A run event as stored and sent: `id` is the run, `seq` its place in the run's log (1, 2, 3, …). */
export type RunFrame = StreamEvent & { id: string; seq: number };
export type RunEventListener = (frame: RunFrame) => void;
/** Why a run's execution must stop, sent to whichever instance executes it. */
export type RunSignal = 'cancelled' | 'interrupted';

/** How long a run's events are kept after its last event (its end): at least a day. */
export const RUN_EVENTS_TTL_SECONDS = 25 * 3600;

/**
 * The log of every run's events. `append` gives the event the run's next
 * sequence number, keeps it and hands it to live listeners (on every
 * instance, with Redis); `read` replays what is kept after a sequence number.
 * Appends of one run from one instance keep their call order.
 * `signal` reaches the instance executing a run (cancel from anywhere).
 */
export interface RunEventBus {
  append(runId: string, event: StreamEvent): Promise<RunFrame>;
  read(runId: string, after: number): Promise<RunFrame[]>;
  listen(runId: string, listener: RunEventListener): () => void;
  signal(runId: string, reason: RunSignal): Promise<void>;
  onSignal(handler: (runId: string, reason: RunSignal) => void): void;
  /** Resolves once this instance hears live frames and signals. */
  ready(): Promise<unknown>;
  close(): Promise<void>;
}

const TERMINAL_EVENTS = new Set(['complete', 'error']);
export const isTerminalFrame = (frame: StreamEvent) => TERMINAL_EVENTS.has(frame.event);

/** Finished runs whose events one instance keeps in memory (the oldest are forgotten first). */
export const MEMORY_FINISHED_RUNS = 1_000;

/**
 * One instance: the log lives in memory, pruned a day after each run's end,
 * and at most MEMORY_FINISHED_RUNS finished runs' logs are kept (memory stays
 * bounded). A forgotten run's subscriber still gets its final frame (rebuilt
 * from the run record).
 */
export class MemoryRunEventBus implements RunEventBus {
  protected readonly emitter = new EventEmitter();
  private readonly logs = new Map<string, { frames: RunFrame[]; expiresAt: number }>();
  private readonly finished = new Set<string>();
  private readonly signalHandlers: Array<(runId: string, reason: RunSignal) => void> = [];
  private readonly pruner: NodeJS.Timeout;

  constructor() {
    this.emitter.setMaxListeners(0);
    this.pruner = setInterval(() => this.prune(), 60_000);
    this.pruner.unref();
  }

  async append(runId: string, event: StreamEvent): Promise<RunFrame> {
    let log = this.logs.get(runId);
    if (!log) this.logs.set(runId, log = { frames: [], expiresAt: Infinity });
    // A snapshot: the executor goes on changing the run and step objects an event refers to.
    const frame = JSON.parse(JSON.stringify({ ...event, id: runId, seq: log.frames.length + 1 })) as RunFrame;
    log.frames.push(frame);
    if (isTerminalFrame(frame)) {
      log.expiresAt = Date.now() + RUN_EVENTS_TTL_SECONDS * 1000;
      this.finished.add(runId);
      for (const old of this.finished) {
        if (this.finished.size <= MEMORY_FINISHED_RUNS) break;
        this.finished.delete(old);
        this.logs.delete(old);
      }
    }
    this.emitter.emit(runId, frame);
    return frame;
  }

  async read(runId: string, after: number): Promise<RunFrame[]> {
    return (this.logs.get(runId)?.frames ?? []).slice(Math.max(0, after));
  }

  listen(runId: string, listener: RunEventListener): () => void {
    this.emitter.on(runId, listener);
    return () => this.emitter.off(runId, listener);
  }

  async signal(runId: string, reason: RunSignal): Promise<void> {
    this.deliverSignal(runId, reason);
  }

  onSignal(handler: (runId: string, reason: RunSignal) => void): void {
    this.signalHandlers.push(handler);
  }

  async ready(): Promise<unknown> {
    return undefined;
  }

  protected deliverSignal(runId: string, reason: RunSignal): void {
    for (const h of this.signalHandlers) h(runId, reason);
  }

  private prune(): void {
    const now = Date.now();
    for (const [id, log] of this.logs) {
      if (log.expiresAt >= now) continue;
      this.logs.delete(id);
      this.finished.delete(id);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.pruner);
    this.emitter.removeAllListeners();
  }
}

/**
 * Several instances: each run's log is a Redis Stream (entry id `seq-0`), its
 * counter a key; numbering, storing and publishing happen in one script, so
 * every instance sees the same numbers in the same order. Live frames travel
 * on a pub/sub channel per run; signals on one shared channel.
 */
const APPEND = `
local seq = redis.call('INCR', KEYS[1])
local frame = string.sub(ARGV[1], 1, -2) .. ',"seq":' .. seq .. '}'
redis.call('XADD', KEYS[2], seq .. '-0', 'f', frame)
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
redis.call('PUBLISH', KEYS[3], frame)
return seq`;

export class RedisRunEventBus extends MemoryRunEventBus {
  private readonly subscriber: Redis;
  private readonly subscribed: Promise<unknown>;
  private readonly signalChannel: string;

  constructor(private readonly redis: Redis, private readonly prefix: string) {
    super();
    this.signalChannel = `${prefix}signal`;
    this.subscriber = redis.duplicate();
    this.subscriber.on('error', () => { /* ioredis reconnects by itself */ });
    this.subscriber.on('pmessage', (_pattern, channel: string, message: string) => {
      const runId = channel.slice(`${prefix}live:`.length);
      try { this.emitter.emit(runId, JSON.parse(message) as RunFrame); } catch { /* not ours */ }
    });
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.signalChannel) return;
      try {
        const { run_id, reason } = JSON.parse(message) as { run_id: string; reason: RunSignal };
        this.deliverSignal(run_id, reason);
      } catch { /* not ours */ }
    });
    this.subscribed = Promise.all([this.subscriber.psubscribe(`${prefix}live:*`), this.subscriber.subscribe(this.signalChannel)]);
  }

  override ready(): Promise<unknown> {
    return this.subscribed;
  }

  override async append(runId: string, event: StreamEvent): Promise<RunFrame> {
    const { id: _id, ...rest } = event as StreamEvent & { id?: string };
    const json = JSON.stringify({ ...rest, id: runId });
    const seq = await this.redis.eval(APPEND, 3, `${this.prefix}seq:${runId}`, `${this.prefix}log:${runId}`, `${this.prefix}live:${runId}`, json, RUN_EVENTS_TTL_SECONDS) as number;
    return { ...rest, id: runId, seq } as RunFrame;
  }

  override async read(runId: string, after: number): Promise<RunFrame[]> {
    const entries = await this.redis.xrange(`${this.prefix}log:${runId}`, `${Math.max(0, after) + 1}-0`, '+');
    return entries.map(([, fields]) => JSON.parse(fields[1]!) as RunFrame);
  }

  override async signal(runId: string, reason: RunSignal): Promise<void> {
    await this.redis.publish(this.signalChannel, JSON.stringify({ run_id: runId, reason }));
  }

  override async close(): Promise<void> {
    await super.close();
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
  }
}
