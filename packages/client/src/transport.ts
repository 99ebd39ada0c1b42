import { CodeloomError, errorFromResponse } from './errors.js';
import { normalizeAuth } from './normalize.js';
import { envVar } from './options.js';
import { checkRetries, shouldRetry } from './retry.js';
import type { AuthSession, ClientOptions, Credentials, FetchLike, RequestOptions, TokenPair, WebSocketConstructor } from './types.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
export const DEFAULT_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_RETRIES = 2;
export const DEFAULT_MAX_RETRY_WAIT_MS = 60_000;
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 8_000;

export interface ResolvedOptions {
  baseUrl: string;
  environment: 'production' | 'sandbox';
  maxRetries: number;
  maxRetryWait: number;
  timeout: number;
  fetch: FetchLike;
  WebSocket: WebSocketConstructor | undefined;
  onTokens: ClientOptions['onTokens'];
  onRetry: ClientOptions['onRetry'];
  headers: Record<string, string>;
}

export interface CallOptions extends RequestOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** `none`: send no credential (register, login, refresh). Default: send the client's credential. */
  auth?: 'none' | 'default';
  /** Resolve with the body's bytes (a Uint8Array: a zip download) instead of its JSON; errors are still problem documents. */
  bytes?: boolean;
}

export function resolveOptions(options: ClientOptions): ResolvedOptions {
  const environment = options.environment ?? 'production';
  if (environment !== 'production' && environment !== 'sandbox') throw new TypeError(`environment must be "production" or "sandbox", not ${JSON.stringify(environment)}`);
  const maxRetries = checkRetries(options.maxRetries ?? DEFAULT_MAX_RETRIES);
  const timeout = options.timeout ?? DEFAULT_TIMEOUT_MS;
  if (typeof timeout !== 'number' || !(timeout > 0)) throw new TypeError('timeout must be a positive number of milliseconds');
  const maxRetryWait = options.maxRetryWait ?? DEFAULT_MAX_RETRY_WAIT_MS;
  if (typeof maxRetryWait !== 'number' || !(maxRetryWait >= 0)) throw new TypeError('maxRetryWait must be a number of milliseconds ≥ 0');
  for (const hook of ['onTokens', 'onRetry', 'fetch'] as const) {
    if (options[hook] !== undefined && typeof options[hook] !== 'function') throw new TypeError(`${hook} must be a function`);
  }
  const globalFetch = (globalThis as { fetch?: FetchLike }).fetch;
  const fetchImpl = options.fetch ?? (globalFetch ? (input: string, init: RequestInit) => globalFetch(input, init) : undefined);
  if (!fetchImpl) throw new TypeError('No fetch implementation: pass options.fetch');
  return {
    baseUrl: (options.baseUrl ?? options.baseURL ?? envVar('CODELOOM_BASE_URL') ?? DEFAULT_BASE_URL).replace(/\/+$/, ''),
    environment,
    maxRetries,
    maxRetryWait,
    timeout,
    fetch: fetchImpl,
    WebSocket: options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket,
    onTokens: options.onTokens,
    onRetry: options.onRetry,
    headers: { ...options.headers },
  };
}


/** Wait before retry number `attempt` (0-based): at least Retry-After, else exponential backoff; plus jitter. */
export function retryDelayMs(attempt: number, retryAfterSec: number | undefined): number {
  const backoff = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
  const base = retryAfterSec !== undefined ? Math.max(0, retryAfterSec * 1000) : backoff;
  return base + Math.random() * Math.min(1000, backoff / 2);
}

/** Resolves after `ms`, or rejects with `cancelled` when the signal aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(CodeloomError.client('cancelled'));
    const onAbort = () => { clearTimeout(timer); reject(CodeloomError.client('cancelled')); };
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Seconds-since-epoch `exp` of a JWT, or undefined when the token is not a readable JWT. Works in browsers (atob). */
export function jwtExpiry(token: string): number | undefined {
  const part = token.split('.')[1];
  if (!part || token.split('.').length !== 3) return undefined;
  try {
    const b64 = part.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(part.length / 4) * 4, '=');
    const payload = JSON.parse(atob(b64)) as { exp?: unknown };
    return typeof payload.exp === 'number' ? payload.exp : undefined;
  } catch {
    return undefined;
  }
}

/**
 * HTTP for the resources: credentials, the sandbox header, timeouts,
 * retries (connection errors, timeouts, 408, 409, 429, 5xx), and refresh-and-repeat on `token_expired` with one shared
 * in-flight refresh.
 */
export class Transport {
  private apiKey: string | undefined;
  private accessToken: string | undefined;
  private refreshToken: string | undefined;
  /** `Date.now()`-based expiry of `accessToken` from the auth response's `expiresIn`, when it said. */
  private accessExpiresAt: number | undefined;
  private refreshing: Promise<AuthSession> | undefined;

  constructor(readonly options: ResolvedOptions, credentials: Credentials | undefined) {
    if (credentials && 'apiKey' in credentials) {
      if (!credentials.apiKey) throw new TypeError('apiKey is empty');
      this.apiKey = credentials.apiKey;
    } else if (credentials && 'accessToken' in credentials) {
      this.accessToken = credentials.accessToken;
      this.refreshToken = credentials.refreshToken;
    }
  }

  /** The credential sent as `Authorization: Bearer …` now. */
  credential(): string | undefined {
    return this.apiKey ?? this.accessToken;
  }

  canRefresh(): boolean {
    return !this.apiKey && !!this.refreshToken;
  }

  /** The credentials held now, in the constructor's form. */
  credentials(): Credentials | undefined {
    if (this.apiKey) return { apiKey: this.apiKey };
    return this.accessToken ? { accessToken: this.accessToken, refreshToken: this.refreshToken } : undefined;
  }

  tokens(): TokenPair | undefined {
    return this.accessToken ? { accessToken: this.accessToken, refreshToken: this.refreshToken } : undefined;
  }

  /** Adopts a session's tokens (login, register, refresh) and tells `onTokens`. */
  async adopt(session: AuthSession): Promise<void> {
    this.apiKey = undefined;
    this.accessToken = session.accessToken;
    this.accessExpiresAt = session.expiresAt;
    if (session.refreshToken) this.refreshToken = session.refreshToken;
    await this.options.onTokens?.({ accessToken: this.accessToken, refreshToken: this.refreshToken });
  }

  clearSession(): void {
    this.accessToken = undefined;
    this.accessExpiresAt = undefined;
    this.refreshToken = undefined;
  }

  url(path: string, query?: CallOptions['query']): string {
    let url = `${this.options.baseUrl}${path}`;
    if (query) {
      const qs = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, String(v));
      const s = qs.toString();
      if (s) url += `?${s}`;
    }
    return url;
  }

  /**
   * Trades a refresh token for new tokens and adopts them. Without an
   * argument it uses the client's refresh token and joins a refresh already
   * in flight: a rotating refresh token must never be presented twice (the
   * server would take that as theft and revoke the session).
   */
  refresh(refreshToken?: string, options: RequestOptions = {}): Promise<AuthSession> {
    if (refreshToken !== undefined && refreshToken !== this.refreshToken) return this.doRefresh(refreshToken, options);
    if (!this.refreshing) {
      // Shared by every caller, so no one caller's signal may cancel it (each caller's wait is cancellable below).
      const shared: RequestOptions = options.timeout !== undefined ? { timeout: options.timeout } : {};
      this.refreshing = this.doRefresh(this.refreshToken, shared).finally(() => { this.refreshing = undefined; });
    }
    return options.signal ? raceAbort(this.refreshing, options.signal) : this.refreshing;
  }

  private async doRefresh(refreshToken: string | undefined, options: RequestOptions): Promise<AuthSession> {
    if (!refreshToken) throw CodeloomError.client('not_authenticated', 'No refresh token: sign in with auth.login() or pass { accessToken, refreshToken }.');
    const raw = await this.request<unknown>('/api/v1/auth/refresh', { ...options, method: 'POST', auth: 'none', body: { refresh_token: refreshToken, refreshToken } });
    const session = normalizeAuth(raw);
    session.refreshToken ??= refreshToken; // a server that does not rotate keeps the old one valid
    await this.adopt(session);
    return session;
  }

  /**
   * After a `token_expired` for `usedToken`: refresh unless someone already
   * did. Concurrent callers share one in-flight refresh, so a rotating
   * refresh token is presented once and `onTokens` runs once.
   */
  async refreshAfterExpiry(usedToken: string | undefined, signal?: AbortSignal): Promise<void> {
    if (usedToken !== undefined && this.accessToken !== usedToken) return; // already refreshed by another call
    await this.refresh(undefined, signal ? { signal } : {});
  }

  /**
   * When the session access token `token` expires (ms, `Date.now()` based):
   * the earlier of its JWT `exp` and the `expiresIn` of the response that
   * brought it. Undefined for API keys (never decoded) and tokens of unknown expiry.
   */
  expiryOf(token: string): number | undefined {
    if (this.apiKey !== undefined || token.startsWith('cl_')) return undefined;
    const exp = jwtExpiry(token);
    const known = [exp === undefined ? undefined : exp * 1000, token === this.accessToken ? this.accessExpiresAt : undefined].filter((v): v is number => v !== undefined);
    return known.length ? Math.min(...known) : undefined;
  }

  /** Refreshes first when the access token is a JWT that has expired or will within `skewSec` (before opening a WebSocket, where a refused credential costs a reconnect). */
  async ensureFresh(skewSec = 5, signal?: AbortSignal): Promise<void> {
    if (!this.canRefresh() || !this.accessToken) return;
    const exp = jwtExpiry(this.accessToken);
    if (exp !== undefined && exp * 1000 - Date.now() <= skewSec * 1000) await this.refreshAfterExpiry(this.accessToken, signal);
  }

  async request<T>(path: string, call: CallOptions = {}): Promise<T> {
    const maxRetries = call.maxRetries === undefined ? this.options.maxRetries : checkRetries(call.maxRetries);
    const method = call.method ?? (call.body !== undefined ? 'POST' : 'GET');
    let retries = 0;
    let refreshed = false;
    for (;;) {
      const used = call.auth === 'none' ? undefined : this.credential();
      let error: CodeloomError;
      let headers: Headers | undefined;
      let body: unknown;
      try {
        const res = await this.send(path, call, used);
        if (res.ok && res.bytes) return res.bytes as T;
        body = readBody(res);
        if (res.ok) return body as T;
        headers = res.headers;
        error = errorFromResponse(res.status, res.headers, body);
      } catch (e) {
        if (!CodeloomError.isInstance(e) || (e.code !== 'connection_error' && e.code !== 'timeout')) throw e;
        error = e;
      }
      if (error.status === 401 && error.code === 'token_expired' && !refreshed && used !== undefined && used !== this.apiKey && this.canRefresh()) {
        refreshed = true;
        await this.refreshAfterExpiry(used, call.signal);
        continue;
      }
      if (retries < maxRetries && shouldRetry(error, headers, body) && (error.retryAfter ?? 0) * 1000 <= this.options.maxRetryWait) {
        const delayMs = retryDelayMs(retries, error.retryAfter);
        retries++;
        const info = { error, attempt: retries, maxRetries, delayMs, method, path };
        this.options.onRetry?.(info);
        call.onRetry?.(info);
        await sleep(delayMs, call.signal);
        continue;
      }
      throw error;
    }
  }

  private async send(path: string, call: CallOptions, credential: string | undefined): Promise<RawResponse> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.options.headers };
    if (credential) headers.authorization = `Bearer ${credential}`;
    if (this.options.environment === 'sandbox') headers['x-environment'] = 'sandbox';
    let body: string | undefined;
    if (call.body !== undefined) {
      body = JSON.stringify(call.body);
      headers['content-type'] = 'application/json';
    }
    if (call.signal?.aborted) throw CodeloomError.client('cancelled');
    const controller = new AbortController();
    const timeoutMs = call.timeout ?? this.options.timeout;
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; controller.abort(); }, timeoutMs);
    const onAbort = () => controller.abort();
    call.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await this.options.fetch(this.url(path, call.query), { method: call.method ?? (body !== undefined ? 'POST' : 'GET'), headers, body, signal: controller.signal });
      // Read the body inside the timeout too: a server that stalls mid-body is a timeout as well.
      if (call.bytes && res.ok) return { status: res.status, ok: res.ok, headers: res.headers, text: '', bytes: new Uint8Array(await res.arrayBuffer()) };
      const text = await res.text();
      return { status: res.status, ok: res.ok, headers: res.headers, text };
    } catch (error) {
      if (CodeloomError.isInstance(error)) throw error;
      if (call.signal?.aborted) throw CodeloomError.client('cancelled', undefined, error);
      if (timedOut) throw CodeloomError.client('timeout', `No complete answer within ${timeoutMs} ms.`, error);
      throw CodeloomError.client('connection_error', `Could not reach ${this.options.baseUrl}: ${(error as Error)?.message ?? String(error)}`, error);
    } finally {
      clearTimeout(timer);
      call.signal?.removeEventListener('abort', onAbort);
    }
  }
}

interface RawResponse {
  status: number;
  ok: boolean;
  headers: Headers;
  text: string;
  bytes?: Uint8Array;
}

function readBody(res: RawResponse): unknown {
  const text = res.text;
  if (!text) return undefined;
  const type = res.headers.get('content-type') ?? '';
  if (/json/i.test(type) || /^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      if (res.ok) throw CodeloomError.client('invalid_response', `The server sent malformed JSON (HTTP ${res.status}).`);
    }
  }
  if (res.ok) throw CodeloomError.client('invalid_response', `Expected JSON, got ${type || 'no content type'} (HTTP ${res.status}).`);
  return text;
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(CodeloomError.client('cancelled'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(CodeloomError.client('cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
