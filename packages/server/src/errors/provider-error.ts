import { AppError } from './app-error.js';

/**
 * The registry codes an upstream failure answers with: 502, 503, 504; 400 `upstream_rejected` (the provider refused the
 * request itself: its code is passed on) and 429 `upstream_rate_limited` (its 429 outlasted the retries). An aborted call
 * is a CancelledError, not a ProviderError.
 */
export type ProviderErrorKind = 'upstream_error' | 'service_unavailable' | 'upstream_timeout' | 'upstream_rejected' | 'upstream_rate_limited';

/** What an upstream said about its failure, passed on to the caller. */
export interface UpstreamInfo {
  /** The provider's own error code (OpenAI's `error.code`, else its `error.type`), e.g. `context_length_exceeded`. */
  code?: string | undefined;
  /** The request field the provider named (OpenAI's `error.param`). */
  param?: string | undefined;
  /** Headers of Codeloom's answer: Retry-After, `x-should-retry`. */
  headers?: Record<string, string> | undefined;
}

/**
 * Thrown by providers for upstream failures. `kind` is the registry code and decides the HTTP answer:
 * upstream_error → 502, service_unavailable → 503, upstream_timeout → 504. A call its caller aborted
 * rejects with the one CancelledError instead. `retryable` marks transient failures (429, 5xx,
 * reset connections) that the caller may retry; `detail` must never contain upstream secrets.
 */
export class ProviderError extends AppError {
  constructor(
    readonly kind: ProviderErrorKind,
    readonly detail: string,
    readonly retryable: boolean,
    readonly upstreamStatus?: number,
    readonly upstream: UpstreamInfo = {},
  ) {
    super(kind, detail, { ...(upstream.headers ? { headers: upstream.headers } : {}), ...(upstream.code ? { upstreamCode: upstream.code } : {}) });
    this.name = 'ProviderError';
  }

  /** The same failure told differently (another detail, retryability or answer headers), keeping what the upstream said. */
  restated(detail: string, retryable = this.retryable, headers?: Record<string, string>): ProviderError {
    const upstream = headers ? { ...this.upstream, headers: { ...this.upstream.headers, ...headers } } : this.upstream;
    return this instanceof UpstreamError
      ? new UpstreamError(this.kind, detail, retryable, this.upstreamStatus, this.retryAfterMs, upstream)
      : new ProviderError(this.kind, detail, retryable, this.upstreamStatus, upstream);
  }
}

/** A ProviderError from an HTTP upstream that also carries the upstream's Retry-After hint. */
export class UpstreamError extends ProviderError {
  constructor(
    kind: ProviderErrorKind,
    detail: string,
    retryable: boolean,
    upstreamStatus?: number,
    /** Parsed Retry-After in ms, when the upstream sent one. */
    readonly retryAfterMs?: number,
    upstream: UpstreamInfo = {},
  ) {
    super(kind, detail, retryable, upstreamStatus, upstream);
  }
}
