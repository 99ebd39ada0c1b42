import type { CodeloomError } from './errors.js';

/**
 * Whether a failed attempt is worth repeating, as the OpenAI SDK decides:
 * connection errors and timeouts, 408, 409, 429 and every 5xx. The server
 * can overrule with `x-should-retry: true|false`.
 */
export function shouldRetry(error: CodeloomError, headers: Headers | undefined): boolean {
  const told = headers?.get('x-should-retry');
  if (told === 'true') return true;
  if (told === 'false') return false;
  if (error.code === 'connection_error' || error.code === 'timeout') return true;
  const s = error.status;
  return s === 408 || s === 409 || s === 429 || s >= 500;
}
