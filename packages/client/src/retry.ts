import type { CodeloomError } from './errors.js';

/**
 * Whether a failed attempt is worth repeating, as the OpenAI SDK decides:
 * connection errors and timeouts, 408, 409, 429 and every 5xx. The server
 * can overrule with `x-should-retry: true|false`. One exception: a 409 whose
 * problem document says `conflict` is Codeloom's answer for a state a repeat
 * cannot change (the email is registered, the run has finished), so it is
 * thrown at once; other 409s (a proxy's, a lock timeout) are retried. Another: a 429 `budget_exceeded`
 * without Retry-After is a budget that never resets (period `total`), so it is thrown at once too.
 */
export function shouldRetry(error: CodeloomError, headers: Headers | undefined, body?: unknown): boolean {
  const told = headers?.get('x-should-retry');
  if (told === 'true') return true;
  if (told === 'false') return false;
  if (error.code === 'connection_error' || error.code === 'timeout') return true;
  // A dollar budget without Retry-After (a `total` one) does not reset: waiting cannot help.
  if (error.code === 'budget_exceeded' && error.retryAfter === undefined) return false;
  const s = error.status;
  if (s === 409) return !(body && typeof body === 'object' && (body as { code?: unknown }).code === 'conflict');
  return s === 408 || s === 429 || s >= 500;
}

/** A valid `maxRetries` (client or per call), else a TypeError. */
export function checkRetries(n: unknown): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new TypeError('maxRetries must be an integer ≥ 0');
  return n;
}
