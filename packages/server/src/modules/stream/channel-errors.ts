import { ERROR_CODES } from '@codeloom/protocol';
import { AppError } from '../../errors.js';
import { asDependencyError } from '../../storage/dependency-errors.js';

/** The `data` of an `error` frame: the problem document's fields, plus `errors`, `retry_after` and `rate_limit` when they apply. */
export type ErrorData = { status: number; code: string; message: string; [k: string]: unknown };

export function problemData(code: keyof typeof ERROR_CODES, message?: string): ErrorData {
  return { status: ERROR_CODES[code].status, code, message: message ?? ERROR_CODES[code].detail };
}

/** An error as an `error` frame tells it: what HTTP would put in headers goes into `retry_after` and `rate_limit`. */
export function toErrorData(error: unknown): ErrorData {
  if (!(error instanceof AppError)) error = asDependencyError(error) ?? error;
  if (!(error instanceof AppError)) return problemData('internal_error');
  const data: ErrorData = problemData(error.code, error.message);
  if (error.extra.errors) data.errors = error.extra.errors;
  if (error.extra.upstreamCode) data.upstream_code = error.extra.upstreamCode;
  const h = error.extra.headers ?? {};
  if (h['retry-after']) data.retry_after = Number(h['retry-after']);
  if (h['x-ratelimit-limit']) data.rate_limit = { limit: Number(h['x-ratelimit-limit']), remaining: Number(h['x-ratelimit-remaining']), reset: Number(h['x-ratelimit-reset']) };
  return data;
}
