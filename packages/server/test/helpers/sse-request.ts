import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

/** A streamed (SSE) request read as it arrives, on a connection of its own: leaving closes exactly that socket. */
export interface Streamed {
  status: number;
  headers: IncomingHttpHeaders;
  events: Array<{ event: string; data: any }>;
  /** The body of a refusal (not a stream). */
  problem: any;
  has(event: string): boolean;
  waitFor(event: string, timeoutMs?: number): Promise<void>;
  leave(): void;
  ended: Promise<void>;
}

export interface SseRequestOptions {
  token: string;
  body: unknown;
  headers?: Record<string, string>;
  /** Added to a waitFor time-out's message (the state of what the test waits on). */
  describe?: () => string;
}

/**
 * POSTs `body` to `url` with `agent: false` (undici's fetch keeps a fresh idle connection after an abort, which
 * holds a server's close for a minute) and resolves once the response's head has arrived.
 */
export function sseRequest(url: string, o: SseRequestOptions): Promise<Streamed> {
  return new Promise((resolve, reject) => {
    const events: Streamed['events'] = [];
    const wake = new Set<() => void>();
    let done = false;
    let text = '';
    let markEnded!: () => void;
    const ended = new Promise<void>((r) => { markEnded = r; });
    const end = () => {
      if (done) return;
      done = true;
      for (const w of wake) w();
      markEnded();
    };
    const req = httpRequest(url, {
      method: 'POST', agent: false, headers: { authorization: `Bearer ${o.token}`, 'content-type': 'application/json', ...o.headers },
    }, (res) => {
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk: string) => {
        text += chunk;
        if (res.statusCode !== 200) return;
        buffer += chunk;
        for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data) });
        }
        for (const w of wake) w();
      });
      for (const e of ['end', 'close', 'error']) res.on(e, end);
      const s: Streamed = {
        status: res.statusCode!, headers: res.headers, events, ended,
        get problem() { return text ? JSON.parse(text) : undefined; },
        has: (event) => events.some((e) => e.event === event),
        waitFor: (event, timeoutMs = 60_000) => new Promise<void>((ok, fail) => {
          const check = () => {
            if (s.has(event)) { finish(); ok(); } else if (done) { finish(); fail(new Error(`the stream ended without ${event}: ${JSON.stringify(events.filter((e) => e.event !== 'token')).slice(0, 800)}`)); }
          };
          const timer = setTimeout(() => { finish(); fail(new Error(`no ${event} in ${timeoutMs} ms${o.describe ? `; ${o.describe()}` : ''}`)); }, timeoutMs);
          const finish = () => { clearTimeout(timer); wake.delete(check); };
          wake.add(check);
          check();
        }),
        leave: () => { req.destroy(); end(); },
      };
      resolve(s);
    });
    req.on('error', (error) => { if (!done) reject(error); end(); });
    req.end(JSON.stringify(o.body));
  });
}
