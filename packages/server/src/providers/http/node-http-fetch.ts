import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';

/**
 * The small part of `fetch` the HTTP providers use, over node:http with
 * keep-alive agents. Node 20's bundled fetch (undici behind WHATWG streams)
 * cost about a millisecond per upstream call in the gateway benchmark; a
 * gateway whose overhead budget is 0.3 ms cannot spend that on every call.
 * Aborting destroys the socket, so the upstream sees the disconnect at once.
 */
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 256, scheduling: 'lifo' }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 256, scheduling: 'lifo' }),
};

class NodeResponse {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null };
  constructor(private readonly res: http.IncomingMessage) {
    this.status = res.statusCode ?? 0;
    this.ok = this.status >= 200 && this.status < 300;
    this.headers = {
      get: (name: string) => {
        const v = res.headers[name.toLowerCase()];
        return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
      },
    };
  }

  async text(): Promise<string> {
    let out = '';
    this.res.setEncoding('utf8');
    for await (const chunk of this.res) out += chunk;
    return out;
  }

  private reader: BodyReader | undefined;

  get body() {
    const reader = (this.reader ??= new BodyReader(this.res));
    return { getReader: () => reader };
  }
}

type ReadResult = { done: true; value: undefined } | { done: false; value: Uint8Array };
const DONE: ReadResult = { done: true, value: undefined };

/**
 * Pull reads over the response's own 'data'/'end' events: the stream's async iterator costs several
 * promises and a 'readable' round per chunk, this one promise per read. The response is paused while a
 * chunk waits unread (backpressure as before). A body that closes before its end is an error, never a clean end.
 */
class BodyReader {
  private readonly queue: Buffer[] = [];
  private ended = false;
  private failure: unknown;
  private waiting: { resolve(r: ReadResult): void; reject(e: unknown): void } | undefined;

  constructor(private readonly res: http.IncomingMessage) {
    res.on('data', (chunk: Buffer) => {
      const w = this.waiting;
      if (w) {
        this.waiting = undefined;
        w.resolve({ done: false, value: chunk });
      } else {
        this.queue.push(chunk);
        res.pause();
      }
    });
    res.on('end', () => { this.ended = true; this.settle(); });
    res.on('error', (error) => this.fail(error));
    res.on('close', () => { if (!this.ended) this.fail(prematureClose()); });
  }

  read(): Promise<ReadResult> {
    const chunk = this.queue.shift();
    if (chunk) {
      if (this.queue.length === 0) this.res.resume();
      return Promise.resolve({ done: false, value: chunk });
    }
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => { this.waiting = { resolve, reject }; });
  }

  async cancel(): Promise<void> {
    this.res.destroy();
  }

  releaseLock(): void {}

  private fail(error: unknown): void {
    this.failure ??= error;
    this.settle();
  }

  private settle(): void {
    const w = this.waiting;
    if (!w) return;
    this.waiting = undefined;
    if (this.failure !== undefined) w.reject(this.failure);
    else w.resolve(DONE);
  }
}

function prematureClose(): Error {
  return Object.assign(new Error('the response closed before its end'), { code: 'ECONNRESET' });
}

interface Target { protocol: string; options: http.RequestOptions }

/** Parsed once per endpoint: the providers call the same URL every time. */
const targets = new Map<string, Target>();
function target(input: string | URL): Target {
  const key = String(input);
  let t = targets.get(key);
  if (!t) {
    const url = new URL(key);
    t = { protocol: url.protocol, options: urlToHttpOptions(url) };
    if (targets.size > 100) targets.clear();
    targets.set(key, t);
  }
  return t;
}

export const nodeHttpFetch = ((input: string | URL, init: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {}) =>
  new Promise<NodeResponse>((resolve, reject) => {
    const { protocol, options } = target(input);
    const agent = agents[protocol as 'http:' | 'https:'];
    if (!agent) return reject(new TypeError(`unsupported protocol ${protocol}`));
    if (init.signal?.aborted) return reject(abortError());
    const body = init.body ?? '';
    const request = (protocol === 'https:' ? https : http).request({
      ...options, method: init.method ?? 'GET', agent,
      headers: { ...init.headers, 'content-length': String(Buffer.byteLength(body)) },
    }, (res) => {
      response = res;
      res.on('error', () => { /* surfaced to the reader through its iterator */ });
      resolve(new NodeResponse(res));
    });
    let response: http.IncomingMessage | undefined;
    // A response fully received keeps its socket for the next call: aborting after that must not kill it.
    const onAbort = () => {
      if (response?.complete) return void response.resume();
      if (!response) reject(abortError());
      request.destroy();
    };
    init.signal?.addEventListener('abort', onAbort, { once: true });
    request.on('error', reject);
    request.end(body);
  })) as unknown as typeof globalThis.fetch;

function abortError(): Error {
  const e = new Error('The operation was aborted.');
  e.name = 'AbortError';
  return e;
}
