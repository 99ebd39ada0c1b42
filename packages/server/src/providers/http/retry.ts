/**
 * Retry policy for upstream model calls: exponential backoff with full
 * jitter (delay drawn uniformly from [0, min(max, base·2^attempt)]), so a
 * fleet of gateways hitting the same overloaded vendor spreads out instead
 * of retrying in lock-step.
 *
 * Only errors that say so (`ProviderError.retryable`) are retried. Streaming
 * callers wrap just the part of a call before any output reached the client:
 * once tokens were delivered, a retry would duplicate them.
 */
import { CancelledError, ProviderError, UpstreamError, wholeSeconds } from '../../errors.js';

export interface RetryOptions {
  /** Retries after the first attempt; 0 = try once. */
  maxRetries: number;
  /** First backoff ceiling; default 250 ms. */
  baseDelayMs?: number;
  /** Backoff ceiling, and the longest Retry-After we are willing to wait; default 8 s. */
  maxDelayMs?: number;
  /** Aborting stops at once: no further attempt, the pending wait is cut short. */
  signal?: AbortSignal;
  /** For tests: a deterministic replacement for Math.random. */
  random?: () => number;
  /** Called before each wait; useful for logs and metrics. */
  onRetry?: (error: ProviderError, nextAttempt: number, delayMs: number) => void;
}

export function cancelledError(): CancelledError {
  return new CancelledError('the caller went away; the upstream request was aborted');
}

/**
 * Runs `fn` (given the 0-based attempt number) until it succeeds, throws a
 * non-retryable error, or retries are exhausted. On giving up after retries
 * the last error is rethrown with the attempt count added to its detail.
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const base = options.baseDelayMs ?? 250;
  const max = options.maxDelayMs ?? 8_000;
  const random = options.random ?? Math.random;
  for (let attempt = 0; ; attempt++) {
    if (options.signal?.aborted) throw cancelledError();
    try {
      return await fn(attempt);
    } catch (err) {
      if (!(err instanceof ProviderError) || !err.retryable) throw err;
      if (options.signal?.aborted) throw cancelledError();
      if (attempt >= options.maxRetries) throw gaveUp(err, attempt + 1);
      const hinted = err instanceof UpstreamError ? err.retryAfterMs : undefined;
      // Retrying sooner than the upstream asked would only burn quota and
      // fail again; if it asks for longer than we may wait, fail fast instead.
      if (hinted !== undefined && hinted > max) throw gaveUp(err, attempt + 1, `asked to retry after ${wholeSeconds(hinted / 1000)} s`);
      const delay = hinted ?? random() * Math.min(max, base * 2 ** attempt);
      options.onRetry?.(err, attempt + 1, delay);
      await sleep(delay, options.signal);
    }
  }
}

/**
 * The last failure, once Codeloom stops retrying. After retries of its own, the answer says
 * `x-should-retry: false` (which the OpenAI and Anthropic SDKs honour), so a client's retries do not
 * multiply Codeloom's: one SDK call costs at most 1 + CODELOOM_UPSTREAM_RETRIES upstream calls. A 429 keeps
 * its Retry-After: waiting that long and trying again is what the provider asked for.
 */
function gaveUp(err: ProviderError, attempts: number, why?: string): ProviderError {
  if (attempts === 1 && !why) return err;
  const note = why ?? `gave up after ${attempts} attempts`;
  return err.restated(`${err.detail} (${note})`, err.retryable, err.kind === 'upstream_rate_limited' ? undefined : { 'x-should-retry': 'false' });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(cancelledError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelledError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
