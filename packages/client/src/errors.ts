import { ERROR_CODES, type ErrorCode } from '@codeloom/protocol';

/**
 * Codes the SDK itself produces, for failures that never reached the server
 * or whose answer could not be read. Every other code comes from the
 * server's registry (`ERROR_CODES`).
 */
export const CLIENT_ERROR_CODES = {
  connection_error: { status: 0, title: 'Connection Error', detail: 'The server could not be reached or the connection dropped.' },
  timeout: { status: 0, title: 'Timeout', detail: 'The request took longer than the configured timeout.' },
  invalid_response: { status: 0, title: 'Invalid Response', detail: 'The server answered with something this SDK cannot read.' },
  not_authenticated: { status: 0, title: 'Not Authenticated', detail: 'This client holds no credential; pass an apiKey or tokens, or call auth.login() first.' },
} as const;
export type ClientErrorCode = keyof typeof CLIENT_ERROR_CODES;

/** A validation failure: a JSON pointer into the request and what is wrong there. */
export interface FieldError {
  path: string;
  message: string;
}

export interface CodeloomErrorInit {
  status: number;
  code: ErrorCode | ClientErrorCode | (string & {});
  detail: string;
  requestId?: string | undefined;
  errors?: FieldError[] | undefined;
  title?: string | undefined;
  type?: string | undefined;
  retryAfter?: number | undefined;
  /** The response headers (lower-case names), when there was an HTTP answer. */
  headers?: Record<string, string> | undefined;
  cause?: unknown;
}

/** Brand shared by every copy of this package loaded in one realm (Symbol.for is global). */
const BRAND = Symbol.for('@codeloom/client.CodeloomError');

/**
 * The one error class of the SDK. Server failures carry the RFC 9457
 * problem document's fields; SDK-side failures use a `CLIENT_ERROR_CODES`
 * code and status 0 (a caller's cancel uses `cancelled`, status 499).
 */
export class CodeloomError extends Error {
  /** HTTP status (0 when no HTTP answer was read). */
  readonly status: number;
  /** Stable machine-readable code: one of `ERROR_CODES` or `CLIENT_ERROR_CODES`. */
  readonly code: ErrorCode | ClientErrorCode | (string & {});
  /** Human-readable explanation. */
  readonly detail: string;
  /** The server's `req_…` id of the failed request, when known. Quote it in bug reports. */
  readonly requestId: string | undefined;
  /** Field errors of a `validation_failed`. */
  readonly errors: FieldError[] | undefined;
  readonly title: string | undefined;
  readonly type: string | undefined;
  /** Seconds the server asked to wait (429 `Retry-After`), when it said. */
  readonly retryAfter: number | undefined;
  /** The response headers (lower-case names) of the failed request, when there was an HTTP answer. */
  readonly headers: Record<string, string> | undefined;

  constructor(init: CodeloomErrorInit) {
    super(init.status ? `${init.status} ${init.code}: ${init.detail}` : `${init.code}: ${init.detail}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'CodeloomError';
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.requestId = init.requestId;
    this.errors = init.errors;
    this.title = init.title;
    this.type = init.type;
    this.retryAfter = init.retryAfter;
    this.headers = init.headers;
    Object.defineProperty(this, BRAND, { value: true, enumerable: false });
  }

  /**
   * True for any CodeloomError, also one made by another copy of this
   * package (two versions in one bundle, another realm's module graph):
   * it checks a `Symbol.for` brand rather than the prototype chain.
   */
  static isInstance(value: unknown): value is CodeloomError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  /** An SDK-side error with its registry detail unless one is given. */
  static client(code: ClientErrorCode | 'cancelled', detail?: string, cause?: unknown): CodeloomError {
    const entry = code === 'cancelled' ? ERROR_CODES.cancelled : CLIENT_ERROR_CODES[code];
    return createError({ status: entry.status, code, title: entry.title, detail: detail ?? entry.detail, cause });
  }

  toJSON() {
    return {
      name: this.name, status: this.status, code: this.code, detail: this.detail, requestId: this.requestId,
      ...(this.errors ? { errors: this.errors } : {}), ...(this.retryAfter !== undefined ? { retryAfter: this.retryAfter } : {}),
    };
  }
}

/** 400 `validation_failed`, `malformed_json`, … */
export class BadRequestError extends CodeloomError { override name = 'BadRequestError'; }
/** 401: the credential is missing, unknown, revoked or expired (or a wrong password). */
export class AuthenticationError extends CodeloomError { override name = 'AuthenticationError'; }
/** 403: the credential lacks a permission (`insufficient_scope`) or may not be used here. */
export class PermissionDeniedError extends CodeloomError { override name = 'PermissionDeniedError'; }
/** 404: no such resource (or one of another account). */
export class NotFoundError extends CodeloomError { override name = 'NotFoundError'; }
/** 409: the request conflicts with the current state. */
export class ConflictError extends CodeloomError { override name = 'ConflictError'; }
/** 422 (not sent by Codeloom today; for proxies and future use). */
export class UnprocessableEntityError extends CodeloomError { override name = 'UnprocessableEntityError'; }
/** 429 `rate_limited`: `retryAfter` says how long to wait. */
export class RateLimitError extends CodeloomError { override name = 'RateLimitError'; }
/** Any 5xx. */
export class InternalServerError extends CodeloomError { override name = 'InternalServerError'; }
/** No HTTP answer: the server could not be reached or the connection dropped (`connection_error`). */
export class APIConnectionError extends CodeloomError { override name = 'APIConnectionError'; }
/** No complete answer within the timeout (`timeout`). */
export class APIConnectionTimeoutError extends APIConnectionError { override name = 'APIConnectionTimeoutError'; }
/** The caller aborted (`cancelled`, status 499). */
export class APIUserAbortError extends CodeloomError { override name = 'APIUserAbortError'; }
/** OpenAI-style name of the base class: every error of this SDK is an `APIError` (= `CodeloomError`). */
export { CodeloomError as APIError };

/** The CodeloomError subclass for a status / code. */
export function createError(init: CodeloomErrorInit): CodeloomError {
  const { status, code } = init;
  const Class = code === 'cancelled' ? APIUserAbortError
    : code === 'timeout' ? APIConnectionTimeoutError
    : code === 'connection_error' ? APIConnectionError
    : status === 400 ? BadRequestError
    : status === 401 ? AuthenticationError
    : status === 403 ? PermissionDeniedError
    : status === 404 ? NotFoundError
    : status === 409 ? ConflictError
    : status === 422 ? UnprocessableEntityError
    : status === 429 ? RateLimitError
    : status >= 500 ? InternalServerError
    : CodeloomError;
  return new Class(init);
}

function headerRecord(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => { out[name.toLowerCase()] = value; });
  return out;
}

/** The registry code of a status, for answers that carried no problem document. */
export function codeForStatus(status: number): string {
  for (const [code, entry] of Object.entries(ERROR_CODES)) if (entry.status === status) return code;
  return status >= 500 ? 'internal_error' : `http_${status}`;
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date). */
export function parseRetryAfter(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/** Builds the error of a non-2xx answer from its (possibly absent) problem document. */
export function errorFromResponse(status: number, headers: Headers, body: unknown): CodeloomError {
  const problem = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const code = typeof problem.code === 'string' ? problem.code
    : typeof problem.error === 'string' ? problem.error // RFC 6749 shape (/oauth/*)
    : codeForStatus(status);
  const detail = typeof problem.detail === 'string' ? problem.detail
    : typeof problem.error_description === 'string' ? problem.error_description
    : typeof problem.message === 'string' ? problem.message
    : typeof body === 'string' && body.trim() ? body.trim().slice(0, 500)
    : (ERROR_CODES as Record<string, { detail: string }>)[code]?.detail ?? `HTTP ${status}`;
  return createError({
    status,
    code,
    detail,
    requestId: typeof problem.request_id === 'string' ? problem.request_id : headers.get('x-request-id') ?? undefined,
    errors: Array.isArray(problem.errors) ? (problem.errors as FieldError[]) : undefined,
    title: typeof problem.title === 'string' ? problem.title : undefined,
    type: typeof problem.type === 'string' ? problem.type : undefined,
    retryAfter: parseRetryAfter(headers.get('retry-after')),
    headers: headerRecord(headers),
  });
}

/** Builds the error of a streaming-channel `error` frame (`{status, code, message, errors?, retry_after?}`). */
export function errorFromFrame(data: unknown): CodeloomError {
  const d = (data && typeof data === 'object' ? data : {}) as Record<string, unknown>;
  const status = typeof d.status === 'number' ? d.status : 0;
  const code = typeof d.code === 'string' ? d.code : codeForStatus(status);
  return createError({
    status,
    code,
    detail: typeof d.message === 'string' ? d.message : typeof d.detail === 'string' ? d.detail : (ERROR_CODES as Record<string, { detail: string }>)[code]?.detail ?? 'The stream failed.',
    errors: Array.isArray(d.errors) ? (d.errors as FieldError[]) : undefined,
    retryAfter: typeof d.retry_after === 'number' ? d.retry_after : undefined,
    requestId: typeof d.request_id === 'string' ? d.request_id : undefined,
  });
}
