/**
 * HTTP plumbing shared by the OpenAI-compatible and Anthropic providers:
 * one upstream call with caller-abort and an idle watchdog, SSE framing,
 * and the mapping of every way a vendor can fail onto ProviderError.
 * The rest of providers/http/: http-provider.ts (a vendor's ModelProvider),
 * sse.ts (SSE framing), node-http-fetch.ts (the upstream request),
 * call-abort.ts (its abort), retry.ts (backoff).
 *
 * Why hand-written rather than the AI SDK's doGenerate/doStream: the SDK
 * swallows the distinction we need between "timed out", "caller went away"
 * and "socket reset" (all surface as AbortError/APICallError), has no idle
 * timeout between stream chunks, and validates every chunk with zod through
 * a pipeline of TransformStreams: measured against the fake vendors, its
 * doStream added 0.3 ms (OpenAI) to 0.9 ms (Anthropic) per streamed request
 * over this code, more than the gateway's whole 0.3 ms budget (doGenerate was
 * on par). Both vendors' wire formats are small enough to own.
 */
import type { FinishReason, GenerateOutput, StreamPart, ReportedUsage, ToolCallDelta } from '../provider.js';
import { CancelledError, ProviderError, UpstreamError, parseRetryAfter, retryAfterHeader, wholeSeconds } from '../../errors.js';
import { cancelledError, withRetry } from './retry.js';
import { SseReader, type SseEvent } from './sse.js';
import { nodeHttpFetch } from './node-http-fetch.js';
import { CallAbort } from './call-abort.js';

export type { SseEvent } from './sse.js';

export interface HttpProviderOptions {
  /** e.g. https://api.openai.com/v1, http://localhost:11434/v1, https://api.anthropic.com */
  baseUrl: string;
  apiKey: string;
  /** Longest wait for the first byte, and for each gap between stream chunks. */
  timeoutMs: number;
  /** Retries after the first attempt for transient failures (429, 5xx, resets). */
  maxRetries: number;
  fetch?: typeof globalThis.fetch;
  /** Backoff tuning (see retry.ts); defaults 250 ms and 8 s. */
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
}

/** One attempt: owns the AbortController the fetch uses, the watchdog and the caller-signal link. */
export class UpstreamCall {
  private readonly controller = new CallAbort();
  private readonly timer: NodeJS.Timeout;
  private readonly onCallerAbort = () => this.controller.abort();
  /** True while we are blocked on the upstream (not while the consumer holds a part). */
  private waiting = true;
  timedOut = false;
  /** Set once a 200 stream's body is being read: a network failure from then on is a cut stream. */
  streaming = false;

  constructor(
    private readonly timeoutMs: number,
    private readonly caller: AbortSignal | undefined,
  ) {
    // One timer per call, re-armed with refresh(): cheaper than clear/set per chunk.
    this.timer = setTimeout(() => {
      if (!this.waiting) return void this.timer.refresh();
      this.timedOut = true;
      this.controller.abort();
    }, timeoutMs).unref();
    caller?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** What nodeHttpFetch is given as its signal: the light handle itself (see call-abort.ts). */
  get handle(): AbortSignal {
    return this.controller as unknown as AbortSignal;
  }

  /** About to block on the upstream: restart the idle window. */
  wait(): void {
    this.waiting = true;
    this.timer.refresh();
  }

  /** Got something; the consumer's own pace must not count as upstream idleness. */
  idle(): void {
    this.waiting = false;
  }

  /** Always safe: aborting a fully read response is a no-op, an unread one frees the socket. */
  dispose(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.onCallerAbort);
    // A ready-made reason: abort() without one builds a DOMException (stack and all) on every call.
    this.controller.abort(CALL_FINISHED);
  }

  /** Maps whatever was thrown while talking to the upstream; `delivered` = text parts already given to the caller. */
  classify(err: unknown, delivered: number): ProviderError | CancelledError {
    if (this.timedOut) {
      return new ProviderError(
        'upstream_timeout',
        delivered > 0
          ? `the provider's stream stalled for more than ${this.timeoutMs} ms after ${delivered} tokens`
          : `the provider did not answer within ${this.timeoutMs} ms`,
        false,
      );
    }
    if (this.caller?.aborted) return cancelledError();
    if (err instanceof ProviderError) {
      // Once tokens reached the client nobody can retry this call transparently.
      if (delivered === 0 || !err.retryable) return err;
      return err.restated(`${err.detail} (after ${delivered} tokens)`, false);
    }
    if (err === ENDED_EARLY) return streamCut(delivered);
    if (err instanceof SyntaxError) {
      const after = delivered > 0 ? ` after ${delivered} tokens` : '';
      return new ProviderError('upstream_error', `the provider sent a malformed response${after}`, false);
    }
    if (delivered > 0 || this.streaming) return streamCut(delivered);
    return networkError(err);
  }
}

const CALL_FINISHED = new Error('upstream call finished');

/** Thrown when a stream's body ends cleanly but without the vendor's end marker. */
const ENDED_EARLY = new Error('stream ended without an end marker');

export function streamCut(delivered: number): ProviderError {
  return delivered > 0
    ? new ProviderError('upstream_error', `the provider's stream was cut after ${delivered} tokens`, false)
    : new ProviderError('upstream_error', "the provider's stream was cut before any output", true);
}

function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

const NOT_RETRYABLE_CODES = new Set(['ENOTFOUND', 'ERR_INVALID_URL', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID']);

function networkError(err: unknown): ProviderError {
  const code = errorCode(err);
  if (code === 'ECONNREFUSED') return new ProviderError('service_unavailable', 'could not connect to the provider (connection refused)', true);
  if (code && NOT_RETRYABLE_CODES.has(code)) return new ProviderError('upstream_error', `could not reach the provider (${code})`, false);
  // undici reports resets as TypeError "fetch failed"/"terminated" with a SocketError cause.
  return new ProviderError('upstream_error', `the provider's connection failed (${code ?? 'connection reset'})`, true);
}

/** Keeps an upstream message useful but free of anything that looks like a credential. */
export function sanitize(message: string, apiKey: string): string {
  let out = message;
  if (apiKey.length >= 4) out = out.split(apiKey).join('[redacted]');
  out = out
    .replace(/\b(sk|pk|rk)-[A-Za-z0-9_*.-]{6,}/g, '[redacted]')
    .replace(/Bearer\s+\S+/gi, 'Bearer [redacted]')
    .replace(/\s+/g, ' ')
    .trim();
  return out.length > 200 ? `${out.slice(0, 197)}...` : out;
}

/** What a vendor's error body says: its message, and its own code and param (OpenAI `error.code`/`error.type`/`error.param`; Anthropic `error.type`; vLLM's numeric code is no code). */
function upstreamSays(body: string): { message?: string; code?: string; param?: string } {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown; type?: unknown };
    const e = parsed.error;
    if (typeof e === 'string') return { message: e }; // Ollama, some llama.cpp builds
    const fields = e && typeof e === 'object' ? (e as Record<string, unknown>) : (parsed as Record<string, unknown>);
    const text = (v: unknown) => (typeof v === 'string' && v && v.length <= 100 && /^[\w.:-]+$/.test(v) ? v : undefined);
    return {
      ...(typeof fields.message === 'string' ? { message: fields.message } : {}),
      ...(text(fields.code) ?? text(fields.type) ? { code: text(fields.code) ?? text(fields.type) } : {}),
      ...(text(fields.param) ? { param: text(fields.param) } : {}),
    };
  } catch {
    // not JSON: never echo raw bodies, they may be proxy pages carrying anything
  }
  return {};
}

/** Seconds a 429 that outlasted Codeloom's retries asks the client to wait when the provider named no time. */
const DEFAULT_UPSTREAM_RETRY_AFTER = 5;

/**
 * The error for a non-2xx upstream answer; also used for in-band (mid-stream) vendor errors. A 4xx that is
 * the request's own fault (400, 404 of a missing resource aside, 413, 422) is `upstream_rejected`: a 400
 * passing on the provider's code, never retried (CONTRACT §12.3). A 429 is retried; one that outlasts the
 * retries is `upstream_rate_limited`, a 429 with Retry-After. Credentials refused (401/403) and a 404 are
 * Codeloom's configuration, not the caller's: 502.
 */
export function errorForStatus(status: number, body: string, apiKey: string, retryAfter?: string | null): UpstreamError {
  const says = upstreamSays(body);
  const said = says.message ? `: ${sanitize(says.message, apiKey)}` : '';
  const hint = parseRetryAfter(retryAfter);
  if (status === 401 || status === 403) {
    return new UpstreamError('upstream_error', `the provider rejected Codeloom's credentials (HTTP ${status})`, false, status);
  }
  if (status === 503 || status === 529) {
    return new UpstreamError('service_unavailable', `the provider is overloaded or unavailable (HTTP ${status})${said}`, true, status, hint);
  }
  if (status === 429) {
    const seconds = hint === undefined ? DEFAULT_UPSTREAM_RETRY_AFTER : wholeSeconds(hint / 1000);
    return new UpstreamError('upstream_rate_limited', `the provider is rate limiting Codeloom (HTTP 429)${said}`, true, status, hint, { code: says.code, headers: retryAfterHeader(seconds) });
  }
  if (status >= 500 || status === 408 || status === 409) {
    return new UpstreamError('upstream_error', `the provider failed (HTTP ${status})${said}`, true, status, hint);
  }
  if (status === 400 || status === 413 || status === 422) {
    return new UpstreamError('upstream_rejected', `the provider refused the request (HTTP ${status})${said}`, false, status, undefined, { code: says.code ?? `http_${status}`, param: says.param });
  }
  return new UpstreamError('upstream_error', `the provider rejected the request (HTTP ${status})${said}`, false, status);
}

/** An error the vendor reported inside a 200 stream; `status` is the HTTP status its type corresponds to, if known. */
export function inBandError(body: string, apiKey: string, status?: number): UpstreamError {
  if (status !== undefined) return errorForStatus(status, body, apiKey);
  const { message } = upstreamSays(body);
  return new UpstreamError('upstream_error', `the provider reported an error mid-stream${message ? `: ${sanitize(message, apiKey)}` : ''}`, true);
}

/** Vendor-specific part of a stream: turns SSE events into text and a final outcome. */
export interface StreamDecoder {
  /** Returns text to emit (may be empty/undefined), or text and tool-call parts (never `finish`). Throws for in-band vendor errors. */
  onEvent(event: SseEvent): string | ToolCallDelta | StreamPart[] | undefined;
  /** Set once the vendor's end marker arrived. */
  readonly ended: boolean;
  /** The outcome once the stream legitimately finished; undefined means it was cut. */
  outcome(): { usage: ReportedUsage; finishReason: FinishReason } | undefined;
}

export interface CallSpec {
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

export interface Runner {
  options: HttpProviderOptions;
  signal: AbortSignal | undefined;
  spec: CallSpec;
}

function retryOptions(r: Runner) {
  return { maxRetries: r.options.maxRetries, baseDelayMs: r.options.retryBaseDelayMs, maxDelayMs: r.options.retryMaxDelayMs, signal: r.signal };
}

async function send(r: Runner, call: UpstreamCall): Promise<Response> {
  const doFetch = r.options.fetch ?? nodeHttpFetch;
  const res = await doFetch(r.spec.url, { method: 'POST', headers: r.spec.headers, body: JSON.stringify(r.spec.body), signal: r.options.fetch ? call.signal : call.handle });
  if (res.ok) return res;
  const body = await res.text().catch(() => '');
  throw errorForStatus(res.status, body, r.options.apiKey, res.headers.get('retry-after'));
}

/** Non-streaming call with retries; `parse` turns the vendor JSON into our output (throw on nonsense). */
export function runGenerate<T = GenerateOutput>(r: Runner, parse: (json: unknown) => T): Promise<T> {
  return withRetry(async () => {
    const call = new UpstreamCall(r.options.timeoutMs, r.signal);
    try {
      const res = await send(r, call);
      call.wait(); // headers arrived: the body gets a fresh window
      return parse(JSON.parse(await res.text()));
    } catch (err) {
      throw call.classify(err, 0);
    } finally {
      call.dispose();
    }
  }, retryOptions(r));
}

/**
 * Streaming call. Everything up to and including the first part is one
 * retryable attempt (a cut before any output is as good as a failed request);
 * after that, failures are final and reported with how far the stream got.
 */
export async function* runStream(
  r: Runner,
  decoder: () => StreamDecoder,
  parseJson: (json: unknown) => GenerateOutput,
): AsyncGenerator<StreamPart> {
  let call!: UpstreamCall;
  let source!: () => Promise<StreamPart>;
  let first = await withRetry(async () => {
    call = new UpstreamCall(r.options.timeoutMs, r.signal);
    try {
      const res = await send(r, call);
      if (!res.body || !(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
        // Some OpenAI-compatible servers ignore `stream: true`; accept their JSON answer.
        call.wait();
        const out = parseJson(JSON.parse(await res.text()));
        const parts: StreamPart[] = [];
        if (out.text) parts.push({ type: 'text', text: out.text });
        if (out.toolCalls) out.toolCalls.forEach((c, index) => parts.push({ type: 'tool-call', index, id: c.id, name: c.name, arguments: c.arguments }));
        parts.push({ type: 'finish', usage: out.usage, finishReason: out.finishReason });
        source = async () => parts.shift()!;
        return source();
      }
      call.streaming = true;
      const sse = new SseReader(res.body.getReader(), call);
      const dec = decoder();
      // Tool-call pieces a single event carried several of (a server that sends whole calls in one chunk).
      const queued: StreamPart[] = [];
      source = async () => {
        if (queued.length > 0) return queued.shift()!;
        for (;;) {
          const event = await sse.next();
          if (event === null || dec.ended) {
            const outcome = dec.outcome();
            if (!outcome) throw ENDED_EARLY;
            return { type: 'finish', ...outcome };
          }
          const out = dec.onEvent(event);
          if (typeof out === 'string') {
            if (out) return { type: 'text', text: out };
          } else if (Array.isArray(out)) {
            if (out.length > 0) {
              queued.push(...out.slice(1));
              return out[0]!;
            }
          } else if (out) {
            return out;
          }
          if (dec.ended) return { type: 'finish', ...dec.outcome()! };
        }
      };
      return await source();
    } catch (err) {
      call.dispose();
      throw call.classify(err, 0);
    }
  }, retryOptions(r));

  let delivered = 0;
  try {
    for (;;) {
      yield first;
      if (first.type === 'finish') return;
      delivered++;
      first = await source();
    }
  } catch (err) {
    throw call.classify(err, delivered);
  } finally {
    // Also runs when the consumer stops iterating early: the upstream socket is released at once.
    call.dispose();
  }
}
