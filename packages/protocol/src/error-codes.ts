/**
 * The one registry of error codes. The server answers every failure with
 * one of these; docs/errors.md documents each (a test keeps them in step)
 * and the SDK re-exports them.
 */
export const ERROR_CODES = {
  validation_failed: { status: 400, title: 'Bad Request', detail: 'The request does not match the schema.' },
  malformed_json: { status: 400, title: 'Bad Request', detail: 'The request body is not valid JSON.' },
  invalid_reset_token: { status: 400, title: 'Bad Request', detail: 'The password reset token is unknown, expired or already used: ask for a new reset link.' },
  request_too_large: { status: 400, title: 'Bad Request', detail: 'The call can never fit a limit: what it may use (its prompt and max_tokens) is more than the whole limit.' },
  unauthorized: { status: 401, title: 'Unauthorized', detail: 'This route needs a credential: send Authorization: Bearer <token or API key>.' },
  invalid_token: { status: 401, title: 'Unauthorized', detail: 'The credential is unknown, malformed, revoked or has a bad signature.' },
  token_expired: { status: 401, title: 'Unauthorized', detail: 'The access token has expired; refresh it and repeat the request.' },
  invalid_credentials: { status: 401, title: 'Unauthorized', detail: 'Wrong email or password.' },
  insufficient_scope: { status: 403, title: 'Forbidden', detail: 'The credential lacks a required permission.' },
  forbidden: { status: 403, title: 'Forbidden', detail: 'This credential may not be used for this request.' },
  signup_closed: { status: 403, title: 'Forbidden', detail: 'This server does not take sign-ups from this address (CODELOOM_SIGNUP); `detail` says which mode refused it.' },
  not_found: { status: 404, title: 'Not Found', detail: 'No such route or resource.' },
  method_not_allowed: { status: 405, title: 'Method Not Allowed', detail: 'The route exists but not with this method.' },
  conflict: { status: 409, title: 'Conflict', detail: 'The request conflicts with the current state.' },
  upgrade_required: { status: 426, title: 'Upgrade Required', detail: 'This route speaks WebSocket: connect with an Upgrade: websocket request.' },
  request_timeout: { status: 408, title: 'Request Timeout', detail: 'The request was not received in time.' },
  payload_too_large: { status: 413, title: 'Payload Too Large', detail: 'The request body is over the size limit.' },
  unsupported_media_type: { status: 415, title: 'Unsupported Media Type', detail: 'Send the body as application/json.' },
  headers_too_large: { status: 431, title: 'Request Header Fields Too Large', detail: 'The request headers are over the size limit.' },
  rate_limited: { status: 429, title: 'Too Many Requests', detail: 'A rate limit is exhausted.' },
  budget_exceeded: { status: 429, title: 'Too Many Requests', detail: 'A budget in US dollars (or a run\'s max_cost_usd or max_tokens) would be exceeded.' },
  max_steps_reached: { status: 422, title: 'Unprocessable Entity', detail: 'An engineer run used its config.max_steps model calls without calling finish.' },
  run_timeout: { status: 408, title: 'Request Timeout', detail: 'An engineer step passed its wall time (config.max_wall_seconds).' },
  cancelled: { status: 499, title: 'Client Closed Request', detail: 'The request was cancelled by the caller.' },
  internal_error: { status: 500, title: 'Internal Server Error', detail: 'Something went wrong on our side.' },
  upstream_error: { status: 502, title: 'Bad Gateway', detail: 'The model provider failed.' },
  upstream_rejected: { status: 400, title: 'Bad Request', detail: 'The model provider refused the request as invalid (for example, the prompt is longer than the model\'s context); `upstream_code` is its own code.' },
  upstream_rate_limited: { status: 429, title: 'Too Many Requests', detail: 'The model provider kept rate limiting Codeloom through its retries; retry after Retry-After.' },
  service_unavailable: { status: 503, title: 'Service Unavailable', detail: 'The service is unavailable; try again shortly.' },
  shutting_down: { status: 503, title: 'Service Unavailable', detail: 'The server is shutting down; reconnect and retry.' },
  upstream_timeout: { status: 504, title: 'Gateway Timeout', detail: 'The model provider did not answer in time.' },
} as const satisfies Record<string, { status: number; title: string; detail: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as ErrorCode[];

export function isErrorCode(value: string): value is ErrorCode {
  return Object.prototype.hasOwnProperty.call(ERROR_CODES, value);
}

/** RFC 9457 problem document as Codeloom sends it. */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  code: ErrorCode | string;
  detail: string;
  request_id: string;
  errors?: Array<{ path: string; message: string }>;
  /** With `upstream_rejected`: the model provider's own code. */
  upstream_code?: string;
}

export function problemTypeFor(code: string): string {
  return `/docs/errors#${code}`;
}
