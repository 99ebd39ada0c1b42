import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';

/**
 * The install phase's only way out (issue 22, CONTRACT §12.1): an HTTP server on a Unix socket in a private
 * temporary directory that the install sandbox — which has no network of its own — reaches through the
 * runner's `registrySocket` hook. It forwards GET and HEAD, and nothing else, to the configured registry's
 * origin under the registry's own path, over one undici pool bound to that origin: it cannot connect
 * anywhere else. A request target that is not a plain path under the registry's path (absolute-form,
 * `//host`, `..` or `.` segments however encoded, backslashes, control characters) is refused; a redirect is
 * followed only when it stays under the registry's path, never to another origin; the client's credential,
 * forwarding and hop-by-hop headers are not passed on (only an allow-list is); response bodies count against
 * one download budget for the proxy's whole life, and each request has a wall time.
 *
 * Paths keep the registry's prefix: with `https://r.example/npm/` npm must use `http://<in-sandbox>/npm/`
 * (`registryPath`), so that a packument is `/npm/lodash` → `https://r.example/npm/lodash` and a tarball URL
 * rewritten by npm's `replace-registry-host=always` (which keeps the tarball's whole path,
 * `/npm/lodash/-/lodash-4.17.21.tgz`) maps to the same place. For registry.npmjs.org the path is `/`.
 */

export interface RegistryProxyOptions {
  /** Bytes of response bodies forwarded over the proxy's whole life (one install); a response that would pass it fails. Default 512 MiB. */
  maxBytes?: number;
  /** Wall time of one request to the registry, headers and body, in ms. Default 120 s. */
  requestTimeoutMs?: number;
  /** Redirects followed per request, each only under the registry's path. Default 5. */
  maxRedirects?: number;
  /** Connections to the registry at once. Default 16 (npm's own default is 15 sockets). */
  connections?: number;
  /** Parent of the private directory that holds the socket. Default the OS temporary directory. */
  tmpDir?: string;
}

export interface RegistryProxy {
  /** The Unix socket (in a 0700 directory of its own) to hand to the runner as `registrySocket`. */
  socketPath: string;
  /** The registry's path, ending in `/` (`/` for registry.npmjs.org): the path of the registry URL npm must use in the sandbox. */
  registryPath: string;
  /** Bytes of response bodies forwarded so far. */
  readonly bytes: number;
  /** Stops listening, cuts open requests and removes the socket and its directory; safe to call twice. */
  close(): Promise<void>;
}

export const DEFAULT_PROXY_MAX_BYTES = 512 * 1024 * 1024;

/** Client headers passed to the registry; everything else (credentials, cookies, forwarding, hop-by-hop, Host) is dropped. */
const REQUEST_HEADERS = new Set(['accept', 'accept-encoding', 'accept-language', 'user-agent', 'cache-control', 'pragma', 'if-none-match', 'if-modified-since', 'range', 'if-range']);
/** npm's and pacote's informational headers (`npm-command`, `npm-session`, `pacote-version`…), but not `npm-otp`. */
const NPM_HEADER = /^(?:npm-(?!otp$)[a-z-]+|pacote-[a-z-]+)$/;
/** Registry headers not passed back: hop-by-hop ones (RFC 9110 §7.6.1), cookies, and `location` (redirects are handled here). */
const DROPPED_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'set-cookie', 'set-cookie2', 'location', 'alt-svc']);
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The registry's base: http(s), no credentials, query or fragment, path ending in `/`. */
export function registryBase(registryUrl: string): URL {
  const url = new URL(registryUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`the npm registry must be an http(s) URL, not ${url.protocol}`);
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

const hasDotSegment = (path: string) => path.split('/').some((s) => s === '.' || s === '..');
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\\\x00-\x20\x7f-\uffff#]/;

/**
 * The path (and query) to ask the registry for, or why not: `target` must be an origin-form request target
 * (`/…`, not `//…`, not `http://…`), under `basePath`, with no `.`/`..` segment, backslash or control
 * character at any level of percent-decoding. The result is sent as it came (npm's `@scope%2fname` stays
 * encoded).
 */
export function upstreamPath(basePath: string, target: string): { path: string } | { status: 400 | 404; error: string } {
  if (!target.startsWith('/') || target.startsWith('//')) return { status: 400, error: 'only a path is accepted as the request target (no absolute URL, host or //)' };
  if (UNSAFE.test(target)) return { status: 400, error: 'the request target has a character that is not allowed' };
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  let level = path;
  for (let i = 0; ; i++) {
    if (hasDotSegment(level) || /[\\\x00-\x1f\x7f]/.test(level) || (i > 0 && level.startsWith('//'))) return { status: 400, error: 'the request path has a . or .. segment or a character that is not allowed' };
    let next: string;
    try { next = decodeURIComponent(level); } catch { return { status: 400, error: 'the request path is not valid percent-encoding' }; }
    if (next === level) break;
    if (i >= 3) return { status: 400, error: 'the request path is encoded too many times' };
    level = next;
  }
  if (!path.startsWith(basePath)) return { status: 404, error: `only paths under the registry's path ${basePath} are served` };
  return { path: target };
}

class Refusal extends Error {
  constructor(readonly status: number, message: string) { super(message); }
}

/** Starts the proxy for `registryUrl` on a fresh Unix socket; `close()` it when the install ends. */
export async function startRegistryProxy(registryUrl: string, options: RegistryProxyOptions = {}): Promise<RegistryProxy> {
  const base = registryBase(registryUrl);
  const maxBytes = options.maxBytes ?? DEFAULT_PROXY_MAX_BYTES;
  const requestTimeoutMs = options.requestTimeoutMs ?? 120_000;
  const maxRedirects = options.maxRedirects ?? 5;
  // Bound to the registry's origin: this pool connects nowhere else, and follows no redirect by itself.
  const pool = new Pool(base.origin, { connections: options.connections ?? 16, headersTimeout: requestTimeoutMs, bodyTimeout: requestTimeoutMs });
  const dir = mkdtempSync(join(options.tmpDir ?? tmpdir(), 'codeloom-registry-'));
  const socketPath = join(dir, 'registry.sock');
  const inFlight = new Set<AbortController>();
  let bytes = 0;

  const fail = (res: ServerResponse, status: number, message: string) => {
    if (res.destroyed || res.writableEnded) return;
    if (res.headersSent) { res.destroy(); return; }
    // npm prints a JSON body's `error` after the status line.
    const body = JSON.stringify({ error: `codeloom registry proxy: ${message}` });
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(status === 405 ? { allow: 'GET, HEAD' } : {}) }).end(body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    // A client that resets its connection must not become an unheard 'error' event here.
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    req.resume();
    const method = req.method ?? '';
    if (method !== 'GET' && method !== 'HEAD') return fail(res, 405, `${method} is not allowed: the registry is read-only here (GET and HEAD)`);
    const target = upstreamPath(base.pathname, req.url ?? '');
    if ('error' in target) return fail(res, target.status, target.error);

    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || !(REQUEST_HEADERS.has(name) || NPM_HEADER.test(name))) continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }

    const abort = new AbortController();
    inFlight.add(abort);
    const timer = setTimeout(() => abort.abort(new Refusal(504, `the registry did not answer within ${requestTimeoutMs} ms`)), requestTimeoutMs);
    res.on('close', () => { if (!res.writableFinished) abort.abort(new Refusal(499, 'the client went away')); });
    try {
      let path = target.path;
      for (let hop = 0; ; hop++) {
        const upstream = await pool.request({ method, path, headers, signal: abort.signal });
        // A body destroyed or aborted here emits 'error'; unheard, that would take the server down.
        upstream.body.on('error', () => undefined);
        const location = upstream.headers.location;
        if (REDIRECTS.has(upstream.statusCode) && typeof location === 'string') {
          upstream.body.resume();
          let next: URL;
          try { next = new URL(location, new URL(path, base.origin)); } catch { throw new Refusal(502, 'the registry redirected to an invalid URL'); }
          if (next.origin !== base.origin) throw new Refusal(403, `the registry redirected to another origin (${next.protocol}//${next.host}); only ${base.origin} is reachable`);
          const again = upstreamPath(base.pathname, `${next.pathname}${next.search}`);
          if ('error' in again) throw new Refusal(403, `the registry redirected outside its path: ${again.error}`);
          if (hop >= maxRedirects) throw new Refusal(502, `more than ${maxRedirects} redirects`);
          path = again.path;
          continue;
        }
        const length = Number(upstream.headers['content-length'] ?? 0);
        if (method === 'GET' && bytes + length > maxBytes) {
          upstream.body.destroy();
          throw new Refusal(403, `the install's download limit of ${maxBytes} bytes would be passed`);
        }
        const out: Record<string, string | string[]> = {};
        const hopByHop = String(upstream.headers.connection ?? '').toLowerCase().split(',').map((s) => s.trim());
        for (const [name, value] of Object.entries(upstream.headers)) {
          if (value === undefined || DROPPED_RESPONSE_HEADERS.has(name) || hopByHop.includes(name)) continue;
          out[name] = value;
        }
        res.writeHead(upstream.statusCode, out);
        for await (const chunk of upstream.body as AsyncIterable<Buffer>) {
          bytes += chunk.length;
          if (bytes > maxBytes) throw new Refusal(403, `the install's download limit of ${maxBytes} bytes was passed`);
          if (!res.write(chunk)) await once(res, 'drain', { signal: abort.signal });
        }
        res.end();
        return;
      }
    } catch (error) {
      const reason = abort.signal.aborted ? abort.signal.reason : error;
      if (reason instanceof Refusal) fail(res, reason.status, reason.message);
      else fail(res, 502, `the registry could not be reached (${(reason as { code?: string })?.code ?? (reason instanceof Error ? reason.message : String(reason))})`);
    } finally {
      clearTimeout(timer);
      inFlight.delete(abort);
    }
  };

  const server = createServer({ requestTimeout: requestTimeoutMs, headersTimeout: Math.min(requestTimeoutMs, 60_000) }, (req, res) => { void handle(req, res); });
  // CONNECT (a tunnel to anywhere) never reaches the handler: answered here.
  server.on('connect', (_req: IncomingMessage, socket: Socket) => { socket.on('error', () => undefined); socket.end('HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'); });
  server.maxConnections = (options.connections ?? 16) * 4;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => { server.off('error', reject); resolve(); });
    });
    chmodSync(socketPath, 0o600);
  } catch (error) {
    await pool.destroy().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  let closing: Promise<void> | undefined;
  return {
    socketPath,
    registryPath: base.pathname,
    get bytes() { return bytes; },
    close() {
      closing ??= (async () => {
        for (const abort of inFlight) abort.abort(new Refusal(503, 'the install ended'));
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await stopped;
        await pool.destroy().catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}
