import { Pool, type Dispatcher } from 'undici';

/**
 * The small part of `fetch` the HTTP providers use, over undici's connection pools driven through their
 * lowest-level interface (`dispatch` with a handler: no stream, no WHATWG objects). Node 20's bundled fetch
 * (undici behind WHATWG streams) cost about a millisecond per upstream call in the gateway benchmark, and
 * node:http with a keep-alive agent about 48 µs of CPU (its ClientRequest, IncomingMessage and agent
 * bookkeeping); this path about 25 µs. Aborting destroys the socket, so the upstream sees the disconnect at once.
 */
const pools = new Map<string, Pool>();

function poolFor(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) {
    // No undici timeouts: the caller's idle watchdog (upstream-http.ts) owns every wait.
    pool = new Pool(origin, { connections: 256, pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });
    pools.set(origin, pool);
  }
  return pool;
}

interface Target { origin: string; path: string }

/** Parsed once per endpoint: the providers call the same URL every time. */
const targets = new Map<string, Target>();
function target(input: string | URL): Target {
  const key = String(input);
  let t = targets.get(key);
  if (!t) {
    const url = new URL(key);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`unsupported protocol ${url.protocol}`);
    t = { origin: url.origin, path: `${url.pathname}${url.search}` };
    if (targets.size > 100) targets.clear();
    targets.set(key, t);
  }
  return t;
}

type ReadResult = { done: true; value: undefined } | { done: false; value: Uint8Array };
const DONE: ReadResult = { done: true, value: undefined };

/** What a provider sees: the status, headers on demand, and the body as text or as pull reads. */
class UpstreamResponse {
  readonly ok: boolean;
  readonly headers = { get: (name: string) => this.header(name) };

  constructor(readonly status: number, private readonly rawHeaders: Buffer[] | string[], private readonly reader: BodyReader) {
    this.ok = status >= 200 && status < 300;
  }

  private header(name: string): string | null {
    const wanted = name.toLowerCase();
    let value: string | null = null;
    for (let i = 0; i + 1 < this.rawHeaders.length; i += 2) {
      if (this.rawHeaders[i]!.toString().toLowerCase() !== wanted) continue;
      const v = this.rawHeaders[i + 1]!.toString();
      value = value === null ? v : `${value}, ${v}`;
    }
    return value;
  }

  async text(): Promise<string> {
    const chunks: Uint8Array[] = [];
    for (let r = await this.reader.read(); !r.done; r = await this.reader.read()) chunks.push(r.value);
    return Buffer.concat(chunks).toString('utf8');
  }

  get body() {
    return { getReader: () => this.reader };
  }
}

/** Unread bytes a response may hold before its connection is paused (and the upstream held back). */
const HIGH_WATER = 64 * 1024;

/**
 * The handler undici calls as the response arrives, and the body's pull reads: one promise per read. Once
 * more than HIGH_WATER bytes wait unread the connection is paused until they are read (backpressure; pausing
 * on every chunk would make undici re-copy the socket's buffer on every resume). A body that fails before its
 * end is an error, never a clean end.
 */
class BodyReader implements Dispatcher.DispatchHandlers {
  private readonly queue: Buffer[] = [];
  private queued = 0;
  private paused = false;
  private ended = false;
  private failure: unknown;
  private waiting: { resolve(r: ReadResult): void; reject(e: unknown): void } | undefined;
  private resumeSocket: (() => void) | undefined;
  private abortRequest: ((reason?: Error) => void) | undefined;
  private aborted = false;

  constructor(
    private onResponse: (response: UpstreamResponse) => void,
    private readonly onFailure: (error: unknown) => void,
  ) {}

  // --- undici's side

  onConnect(abort: (reason?: Error) => void): void {
    if (this.aborted) return void abort(abortError());
    this.abortRequest = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[] | string[] | null, resume: () => void): boolean {
    if (statusCode < 200) return true; // 1xx: the answer is still to come
    this.resumeSocket = resume;
    const respond = this.onResponse;
    this.onResponse = noop;
    respond(new UpstreamResponse(statusCode, rawHeaders ?? [], this));
    return true;
  }

  onData(chunk: Buffer): boolean {
    const w = this.waiting;
    if (w) {
      this.waiting = undefined;
      w.resolve({ done: false, value: chunk });
      return true;
    }
    this.queue.push(chunk);
    this.queued += chunk.length;
    if (this.queued < HIGH_WATER) return true;
    this.paused = true;
    return false;
  }

  onComplete(): void {
    this.ended = true;
    this.settle();
  }

  onError(error: Error): void {
    this.failure ??= error;
    this.onFailure(error);
    this.settle();
  }

  // --- the provider's side

  read(): Promise<ReadResult> {
    const chunk = this.queue.shift();
    if (chunk) {
      this.queued -= chunk.length;
      if (this.paused && this.queue.length === 0) {
        this.paused = false;
        this.resumeSocket?.();
      }
      return Promise.resolve({ done: false, value: chunk });
    }
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => { this.waiting = { resolve, reject }; });
  }

  async cancel(): Promise<void> {
    this.abort();
  }

  releaseLock(): void {}

  /** Stops the request: before the answer, the caller's promise fails; a response fully received keeps its socket. */
  abort(): void {
    if (this.aborted || this.ended) return;
    this.aborted = true;
    this.abortRequest?.(abortError());
  }

  private settle(): void {
    const w = this.waiting;
    if (!w) return;
    this.waiting = undefined;
    if (this.failure !== undefined) w.reject(this.failure);
    else w.resolve(DONE);
  }
}

const noop = () => {};

export const nodeHttpFetch = ((input: string | URL, init: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {}) =>
  new Promise<UpstreamResponse>((resolve, reject) => {
    const { origin, path } = target(input);
    if (init.signal?.aborted) return reject(abortError());
    let answered = false;
    const reader = new BodyReader((response) => { answered = true; resolve(response); }, (error) => { if (!answered) reject(error); });
    init.signal?.addEventListener('abort', () => {
      if (!answered) reject(abortError());
      reader.abort();
    }, { once: true });
    poolFor(origin).dispatch({ origin, path, method: (init.method ?? 'GET') as Dispatcher.HttpMethod, headers: init.headers, body: init.body }, reader);
  })) as unknown as typeof globalThis.fetch;

function abortError(): Error {
  const e = new Error('The operation was aborted.');
  e.name = 'AbortError';
  return e;
}
