import http from 'node:http';
import https from 'node:https';

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

  get body() {
    const iterator = this.res[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    const res = this.res;
    return {
      getReader: () => ({
        async read(): Promise<{ done: true; value: undefined } | { done: false; value: Uint8Array }> {
          const { done, value } = await iterator.next();
          return done ? { done: true, value: undefined } : { done: false, value: new Uint8Array(value.buffer, value.byteOffset, value.length) };
        },
        async cancel() { res.destroy(); },
        releaseLock() {},
      }),
    };
  }
}

export const nodeHttpFetch = ((input: string | URL, init: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {}) =>
  new Promise<NodeResponse>((resolve, reject) => {
    const url = new URL(String(input));
    const agent = agents[url.protocol as 'http:' | 'https:'];
    if (!agent) return reject(new TypeError(`unsupported protocol ${url.protocol}`));
    if (init.signal?.aborted) return reject(abortError());
    const body = init.body ?? '';
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: init.method ?? 'GET', agent,
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
