/**
 * Retry-After, both ways: the whole seconds a refusal tells the client to wait (from a window's reset
 * time or a wait in seconds), the header that says it, and reading it back (our own refusals, and an
 * upstream vendor's header in either of its forms).
 */
import { AppError } from './app-error.js';

/** A limit's window as the headers report it: its size, what is left, when it frees up (Unix seconds). */
export interface WindowReport {
  limit: number;
  remaining: number;
  resetAt: number;
}

/** A wait of `seconds` (fractional) in whole seconds, rounded up, at least 1. */
export function wholeSeconds(seconds: number): number {
  return Math.max(1, Math.ceil(seconds));
}

/** Whole seconds until `resetAt` (Unix seconds), at least 1. */
export function secondsUntil(resetAt: number, now = Date.now()): number {
  return Math.max(1, resetAt - Math.floor(now / 1000));
}

/** The `retry-after` header of a refusal. */
export function retryAfterHeader(seconds: number): { 'retry-after': string } {
  return { 'retry-after': String(seconds) };
}

/** X-RateLimit-Limit, -Remaining and -Reset of a window. */
export function rateLimitHeaders(window: WindowReport): Record<string, string> {
  return { 'x-ratelimit-limit': String(window.limit), 'x-ratelimit-remaining': String(window.remaining), 'x-ratelimit-reset': String(window.resetAt) };
}

/**
 * 429 `rate_limited`: come back when `window` frees up (Retry-After). With `report`, the refusal also
 * carries the window's X-RateLimit-* headers (where nothing has set them on the reply already).
 */
export function rateLimited(detail: string | undefined, window: WindowReport, options: { report?: boolean } = {}): AppError {
  return new AppError('rate_limited', detail, { headers: { ...retryAfterHeader(secondsUntil(window.resetAt)), ...(options.report ? rateLimitHeaders(window) : {}) } });
}

/** The seconds a refusal asks to wait (its Retry-After), or undefined when it names none. */
export function retryAfterOf(error: AppError): number | undefined {
  const value = error.extra.headers?.['retry-after'];
  return value === undefined ? undefined : Number(value);
}

/**
 * An upstream's Retry-After: delta-seconds or an HTTP date (RFC 9110 §10.2.3).
 * Returns ms, or undefined when absent or unparseable.
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value == null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
