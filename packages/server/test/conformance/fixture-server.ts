/**
 * A loopback HTTP server that replays recorded vendor responses
 * (fixtures/*.json, *.sse, *.http) byte for byte, so the providers meet the
 * vendors' exact wire format rather than one a fake re-creates.
 *
 * A scenario names the recordings of one situation: `json` answers a plain
 * request, `sse` a request with `"stream": true`, `http` (a whole response:
 * status line, headers, body) answers both. Scenarios are queued with
 * `serve(scenario, options)`; with the queue empty the default scenario
 * answers. Options change only how the bytes travel:
 *
 *   times           answer this many requests so (default 1)
 *   headers         extra or replacing response headers (e.g. a shorter retry-after)
 *   delayMs         pause before each SSE event after the first
 *   split           write every SSE event in pieces with a pause between them: cut in the
 *                   middle of the event, inside each multi-byte character and between CR and LF
 *   cutAfterEvents  destroy the socket after that many SSE events (a reset mid-answer)
 *   end             'destroy': reset the socket after the last byte instead of ending the body
 *   hang            accept the request and never answer
 *
 * `aborts` counts requests whose connection the client closed before the
 * answer was complete; `waitForAborts(n)` resolves once it reaches n.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const FIXTURES = new URL('./fixtures/', import.meta.url);

/** The exact bytes of a recording. */
export function fixture(name: string): Buffer {
  return readFileSync(new URL(name, FIXTURES));
}

export interface Scenario {
  json?: string;
  sse?: string;
  http?: string;
}

export interface ReplayOptions {
  times?: number;
  headers?: Record<string, string>;
  delayMs?: number;
  split?: boolean;
  cutAfterEvents?: number;
  end?: 'destroy';
  hang?: boolean;
}

export interface ReplayedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface FixtureServer {
  readonly url: string;
  readonly requests: ReplayedRequest[];
  readonly aborts: number;
  serve(scenario: Scenario, options?: ReplayOptions): void;
  /** Empties the queue and the records. */
  reset(): void;
  waitForAborts(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A recorded whole response: `HTTP/1.1 429 Too Many Requests`, header lines, a blank line, the body. */
export function parseHttpFixture(bytes: Buffer): { status: number; headers: Record<string, string>; body: Buffer } {
  const text = bytes.toString('utf8');
  const gap = /\r?\n\r?\n/.exec(text);
  if (!gap) throw new Error('a recorded HTTP response needs a blank line after its headers');
  const [statusLine, ...lines] = text.slice(0, gap.index).split(/\r?\n/);
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  if (!status) throw new Error(`not a recorded HTTP response: ${statusLine}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status, headers, body: bytes.subarray(Buffer.byteLength(text.slice(0, gap.index + gap[0].length))) };
}

/** The SSE events of a body, each with its terminating blank line (a trailing partial event too). */
export function sseEvents(body: Buffer): Buffer[] {
  const text = body.toString('latin1'); // one char per byte: offsets stay byte offsets
  const events: Buffer[] = [];
  let start = 0;
  for (const m of text.matchAll(/\r\n\r\n|\n\n|\r\r/g)) {
    const end = m.index + m[0].length;
    events.push(body.subarray(start, end));
    start = end;
  }
  if (start < body.length) events.push(body.subarray(start));
  return events;
}

/** Where to cut one event into TCP writes: its middle, inside every multi-byte UTF-8 character, between every CR and LF. */
function splitPoints(event: Buffer): number[] {
  const points = new Set<number>([Math.floor(event.length / 2)]);
  for (let i = 1; i < event.length; i++) {
    const b = event[i]!;
    if ((b & 0xc0) === 0x80 && (event[i - 1]! & 0x80) !== 0) points.add(i); // a continuation byte: cut before it
    if (b === 0x0a && event[i - 1] === 0x0d) points.add(i);
  }
  return [...points].filter((p) => p > 0 && p < event.length).sort((a, b) => a - b);
}

const HOP_BY_HOP = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startFixtureServer(defaultScenario: Scenario): Promise<FixtureServer> {
  let queue: Array<{ scenario: Scenario; options: ReplayOptions; left: number }> = [];
  const requests: ReplayedRequest[] = [];
  let aborts = 0;
  let closing = false;
  const waiters = new Set<() => void>();

  const next = (): { scenario: Scenario; options: ReplayOptions } => {
    const head = queue[0];
    if (!head) return { scenario: defaultScenario, options: {} };
    if (--head.left <= 0) queue.shift();
    return head;
  };

  async function answer(res: ServerResponse, body: any, destroy: () => void): Promise<void> {
    const { scenario, options } = next();
    if (options.hang) return;
    const write = (chunk: Buffer) => new Promise<void>((resolve) => res.write(chunk, () => resolve()));
    if (scenario.http) {
      const recorded = parseHttpFixture(fixture(scenario.http));
      res.writeHead(recorded.status, { ...strip(recorded.headers), ...options.headers, 'content-length': String(recorded.body.length) });
      return void res.end(recorded.body);
    }
    const file = body?.stream === true ? scenario.sse : scenario.json;
    if (!file) throw new Error(`the scenario has no ${body?.stream === true ? 'sse' : 'json'} recording`);
    const bytes = fixture(file);
    if (file.endsWith('.json')) {
      res.writeHead(200, { 'content-type': 'application/json', ...options.headers, 'content-length': String(bytes.length) });
      return void res.end(bytes);
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...options.headers });
    res.flushHeaders();
    const events = sseEvents(bytes);
    for (let i = 0; i < events.length; i++) {
      if (i === options.cutAfterEvents) return destroy();
      if (options.delayMs && i > 0) await pause(options.delayMs);
      if (res.destroyed) return;
      const event = events[i]!;
      if (!options.split) {
        await write(event);
        continue;
      }
      let from = 0;
      for (const to of [...splitPoints(event), event.length]) {
        await write(event.subarray(from, to));
        from = to;
        await pause(2);
      }
    }
    if (options.end === 'destroy' || options.cutAfterEvents === events.length) return destroy();
    res.end();
  }

  const server = createServer((req, res) => {
    req.socket.setNoDelay(true);
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(parts).toString('utf8');
      let body: any = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // keep the raw text
      }
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      let selfDestroyed = false;
      const destroy = () => {
        selfDestroyed = true;
        req.socket.destroy();
      };
      res.on('close', () => {
        if (res.writableFinished || selfDestroyed || closing) return;
        aborts++;
        for (const wake of waiters) wake();
      });
      answer(res, body, destroy).catch((err: Error) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(`fixture server: ${err.message}`);
        else destroy();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get aborts() {
      return aborts;
    },
    serve(scenario, options = {}) {
      queue.push({ scenario, options, left: options.times ?? 1 });
    },
    reset() {
      queue = [];
      requests.length = 0;
      aborts = 0;
    },
    waitForAborts(count, timeoutMs = 2_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (aborts < count) return;
          done();
          resolve();
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`fixture server: expected ${count} client abort(s) within ${timeoutMs} ms, saw ${aborts}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      closing = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function strip(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}
