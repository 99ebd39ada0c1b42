import { AppError } from './app-error.js';

/** The registry codes an upstream failure answers with: 502, 503, 504 (an aborted call is a CancelledError, not a ProviderError). */
export type ProviderErrorKind = 'upstream_error' | 'service_unavailable' | 'upstream_timeout';

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
  ) {
    super(kind, detail);
    this.name = 'ProviderError';
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
  ) {
    super(kind, detail, retryable, upstreamStatus);
  }
}
