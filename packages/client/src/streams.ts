import type { Run } from '@codeloom/protocol';
import { AsyncQueue, openChannel, type Channel, type Frame } from './channel.js';
import { CodeloomError, errorFromFrame } from './errors.js';
import { normalizeGeneration } from './normalize.js';
import { shouldRetry } from './retry.js';
import { retryDelayMs, sleep, type Transport } from './transport.js';
import type { GenerateParams, GenerationResult, RunEvent, StreamGenerateOptions } from './types.js';

function randomId(prefix: string): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  const rand = c?.randomUUID ? c.randomUUID().replace(/-/g, '').slice(0, 16) : Math.random().toString(36).slice(2, 14);
  return `${prefix}${rand}`;
}

/** Links an optional outside signal to an internal controller. */
function linkSignal(controller: AbortController, outside: AbortSignal | undefined): () => void {
  if (!outside) return () => {};
  if (outside.aborted) { controller.abort(); return () => {}; }
  const onAbort = () => controller.abort();
  outside.addEventListener('abort', onAbort, { once: true });
  return () => outside.removeEventListener('abort', onAbort);
}

/**
 * A streamed generation (`client.stream.generate()`): iterate it for the
 * token strings as they arrive; `result` resolves with the final
 * GenerationResult (with `files`) or rejects with a CodeloomError. Abort the
 * signal you passed, or call `cancel()`, and both end at once with code
 * `cancelled` (no further token is yielded, tokens already received but not
 * yet read included); `{"type":"cancel"}` is sent and the connection closed,
 * so the server aborts the model call in the background.
 */
export class GenerationStream implements AsyncIterable<string> {
  /** Your request id on the channel. */
  readonly id: string;
  /** The final result; rejects with a CodeloomError (e.g. `cancelled`, `rate_limited`, `upstream_error`). */
  readonly result: Promise<GenerationResult>;
  private readonly tokens = new AsyncQueue<string>();
  private readonly controller = new AbortController();
  private readonly unlink: () => void;
  private channel: Channel | undefined;
  private sent = false;
  private finished = false;
  private tokenCount = 0;
  private retries = 0;
  private collected = '';
  private settle!: { resolve: (r: GenerationResult) => void; reject: (e: unknown) => void };

  constructor(private readonly transport: Transport, private readonly params: GenerateParams, private readonly options: StreamGenerateOptions = {}) {
    this.id = options.id ?? randomId('r_');
    this.result = new Promise<GenerationResult>((resolve, reject) => { this.settle = { resolve, reject }; });
    this.result.catch(() => {}); // a caller who only iterates must not get an unhandled rejection
    this.unlink = linkSignal(this.controller, options.signal);
    this.controller.signal.addEventListener('abort', () => this.onAbort(), { once: true });
    void this.start();
  }

  /** The text received so far (the tokens concatenated). */
  get text(): string {
    return this.collected;
  }

  /** Cancels the generation (same as aborting the signal). */
  cancel(): void {
    this.controller.abort();
  }

  [Symbol.asyncIterator](): AsyncIterator<string> {
    return this.tokens;
  }

  private async start(): Promise<void> {
    if (this.controller.signal.aborted) return this.fail(CodeloomError.client('cancelled'));
    try {
      const channel = await openChannel(this.transport, { signal: this.controller.signal, ...(this.options.timeout ? { timeout: this.options.timeout } : {}) });
      if (this.finished) return channel.close();
      this.channel = channel;
      channel.listen((frame) => this.onFrame(frame), (error) => this.onClosed(error));
      this.sendGenerate();
    } catch (error) {
      // A connection that could not be opened (unreachable, a 429/5xx refusal) is retried like a request.
      if (!this.retryLater(error, () => { void this.start(); })) this.fail(error);
    }
  }

  /** The connection closed before the result: before any token it is opened again within the retry budget. */
  private onClosed(error: CodeloomError): void {
    if (this.finished) return;
    this.channel = undefined;
    this.sent = false;
    if (!this.retryLater(error, () => { void this.start(); })) this.fail(error);
  }

  private sendGenerate(): void {
    if (this.finished || !this.channel) return;
    const { streamTokens = true } = this.options;
    try {
      this.channel.send({ ...this.params, type: 'generate', id: this.id, streamTokens });
      this.sent = true;
    } catch (error) {
      this.fail(error);
    }
  }

  private onFrame(frame: Frame): void {
    if (this.finished) return;
    if (frame.id !== undefined && frame.id !== this.id) return;
    if (frame.event === 'token' && typeof frame.data === 'string') {
      this.tokenCount++;
      this.collected += frame.data;
      this.tokens.push(frame.data);
    } else if (frame.event === 'complete') {
      this.finish(normalizeGeneration(frame.data));
    } else if (frame.event === 'error') {
      const error = errorFromFrame(frame.data);
      this.sent = false;
      if (!this.retryLater(error, () => this.sendGenerate())) this.fail(error);
    }
  }

  /**
   * Schedules `again` when `error` is worth repeating, by the rule and budget of HTTP requests
   * (transport.ts): connection errors, timeouts, 408, 409 other than `conflict`, 429 and 5xx, at
   * most `maxRetries` times per generation, waiting the same backoff (at least `Retry-After`) —
   * but only before the first token (the text so far is never sent twice).
   */
  private retryLater(error: unknown, again: () => void): boolean {
    const { maxRetries, maxRetryWait, onRetry } = this.transport.options;
    if (!CodeloomError.isInstance(error) || this.tokenCount > 0 || this.retries >= maxRetries || this.controller.signal.aborted) return false;
    if (!shouldRetry(error, undefined, { code: error.code }) || (error.retryAfter ?? 0) * 1000 > maxRetryWait) return false;
    const delayMs = retryDelayMs(this.retries, error.retryAfter);
    this.retries++;
    const info = { error, attempt: this.retries, maxRetries, delayMs, method: 'GET', path: '/api/v1/stream' };
    onRetry?.(info);
    this.options.onRetry?.(info);
    sleep(delayMs, this.controller.signal).then(again, () => { /* cancelled meanwhile */ });
    return true;
  }

  private onAbort(): void {
    if (this.finished) return;
    if (this.channel?.open && this.sent) {
      // Tell the server (it aborts the model call); the close that follows in cleanup() is queued after this frame.
      try { this.channel.send({ type: 'cancel', id: this.id }); } catch { /* closed meanwhile */ }
    }
    this.tokens.discard(); // nothing more is yielded after a cancel
    this.fail(CodeloomError.client('cancelled'));
  }

  private finish(result: GenerationResult): void {
    if (this.finished) return;
    this.finished = true;
    this.cleanup();
    this.tokens.end();
    this.settle.resolve(result);
  }

  private fail(error: unknown): void {
    if (this.finished) return;
    this.finished = true;
    this.cleanup();
    const err = CodeloomError.isInstance(error) ? error : CodeloomError.client('connection_error', (error as Error)?.message, error);
    this.tokens.end(err);
    this.settle.reject(err);
  }

  private cleanup(): void {
    this.unlink();
    this.channel?.close();
  }
}

/**
 * Live events of a run (`client.runs.watch(id)`): iterate it for the
 * RunEvents (`run_started`, `step_started`, `token`, `step_completed`, then
 * `complete` or `error`), after which it ends. `result` resolves with the
 * final run record (check `status`: succeeded, failed or cancelled). The
 * server replays the run's kept events first, so a watch opened late (even
 * after the run finished) still sees every step; each event carries its
 * `seq` and arrives once. When the connection drops, the watch reconnects
 * and resumes after the last `seq` it delivered (`after` starts later).
 * Breaking out of the loop, `close()`, or aborting the signal closes the connection.
 */
export class RunWatch implements AsyncIterable<RunEvent> {
  readonly result: Promise<Run>;
  private readonly events: AsyncQueue<RunEvent>;
  private readonly controller = new AbortController();
  private readonly unlink: () => void;
  private channel: Channel | undefined;
  private finished = false;
  private reconnects = 0;
  private lastSeq: number;
  private settle!: { resolve: (r: Run) => void; reject: (e: unknown) => void };

  constructor(private readonly transport: Transport, readonly runId: string, private readonly options: { signal?: AbortSignal; timeout?: number; after?: number } = {}) {
    this.lastSeq = options.after ?? 0;
    this.events = new AsyncQueue<RunEvent>(() => this.close());
    this.result = new Promise<Run>((resolve, reject) => { this.settle = { resolve, reject }; });
    this.result.catch(() => {});
    this.unlink = linkSignal(this.controller, options.signal);
    this.controller.signal.addEventListener('abort', () => this.fail(CodeloomError.client('cancelled', 'Stopped watching the run.')), { once: true });
    void this.start();
  }

  /** The `seq` of the last event delivered (pass it as `after` to resume elsewhere). */
  get seq(): number {
    return this.lastSeq;
  }

  /** Stops watching (the run itself goes on; use `runs.cancel()` to stop it). */
  close(): void {
    this.controller.abort();
  }

  [Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    return this.events;
  }

  private async start(): Promise<void> {
    if (this.controller.signal.aborted) return this.fail(CodeloomError.client('cancelled'));
    try {
      const channel = await openChannel(this.transport, { signal: this.controller.signal, ...(this.options.timeout ? { timeout: this.options.timeout } : {}) });
      if (this.finished) return channel.close();
      this.channel = channel;
      channel.listen((frame) => this.onFrame(frame), (error) => this.onDrop(error));
      channel.send({ type: 'subscribe', run_id: this.runId, ...(this.lastSeq ? { after: this.lastSeq } : {}) });
    } catch (error) {
      this.onDrop(error);
    }
  }

  /** The connection closed before the run's end: connect again and resume after the last event, a few times. */
  private onDrop(error: unknown): void {
    if (this.finished || this.controller.signal.aborted) return;
    // Only a dropped or unreachable connection is worth another try (not a refused credential, not a missing WebSocket).
    const dropped = CodeloomError.isInstance(error) && (error.code === 'connection_error' || error.code === 'shutting_down' || error.status >= 500);
    if (!dropped || this.reconnects >= 3) return this.fail(error);
    this.reconnects += 1;
    this.channel?.close();
    this.channel = undefined;
    setTimeout(() => { void this.start(); }, 250 * this.reconnects);
  }

  private onFrame(frame: Frame): void {
    if (this.finished) return;
    // An error frame without id answers a subscribe frame the server could not read.
    if (frame.id !== this.runId && !(frame.event === 'error' && frame.id === undefined)) return;
    if (typeof frame.seq === 'number') {
      if (frame.seq <= this.lastSeq) return; // already delivered before a reconnect
      this.lastSeq = frame.seq;
    }
    if (frame.event === 'error') {
      const data = (frame.data ?? {}) as { run?: Run };
      if (!data.run) return this.fail(errorFromFrame(frame.data)); // the subscription itself was refused (e.g. 404)
      this.events.push(frame as unknown as RunEvent);
      return this.finish(data.run);
    }
    this.events.push(frame as unknown as RunEvent);
    if (frame.event === 'complete') this.finish(frame.data as Run);
  }

  private finish(run: Run): void {
    if (this.finished) return;
    this.finished = true;
    this.cleanup();
    this.events.end();
    this.settle.resolve(run);
  }

  private fail(error: unknown): void {
    if (this.finished) return;
    this.finished = true;
    this.cleanup();
    const err = CodeloomError.isInstance(error) ? error : CodeloomError.client('connection_error', (error as Error)?.message, error);
    this.events.end(err);
    this.settle.reject(err);
  }

  private cleanup(): void {
    this.unlink();
    this.channel?.close();
  }
}
