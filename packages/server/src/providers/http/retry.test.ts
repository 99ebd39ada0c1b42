import { describe, expect, it } from 'vitest';
import { ProviderError, UpstreamError, parseRetryAfter, CancelledError } from '../../errors.js';
import { withRetry } from './retry.js';

const transient = () => new ProviderError('upstream_error', 'the provider failed (HTTP 500)', true, 500);

describe('withRetry', () => {
  it('retries retryable errors until success, counting attempts', async () => {
    const attempts: number[] = [];
    const out = await withRetry(async (attempt) => {
      attempts.push(attempt);
      if (attempt < 2) throw transient();
      return 'ok';
    }, { maxRetries: 3, baseDelayMs: 1 });
    expect(out).toBe('ok');
    expect(attempts).toEqual([0, 1, 2]);
  });

  it('does not retry non-retryable or foreign errors', async () => {
    let calls = 0;
    const fatal = new ProviderError('upstream_error', 'credentials', false, 401);
    await expect(withRetry(async () => { calls++; throw fatal; }, { maxRetries: 3 })).rejects.toBe(fatal);
    await expect(withRetry(async () => { calls++; throw new TypeError('bug'); }, { maxRetries: 3 })).rejects.toThrow(TypeError);
    expect(calls).toBe(2);
  });

  it('gives up after maxRetries, keeping the kind and noting the attempts', async () => {
    let calls = 0;
    const err = await withRetry(async () => {
      calls++;
      throw new UpstreamError('service_unavailable', 'the provider is overloaded (HTTP 529)', true, 529);
    }, { maxRetries: 2, baseDelayMs: 1 }).catch((e: unknown) => e as ProviderError);
    expect(calls).toBe(3);
    expect(err).toMatchObject({ kind: 'service_unavailable', upstreamStatus: 529, detail: 'the provider is overloaded (HTTP 529) (gave up after 3 attempts)' });
  });

  it('uses exponential backoff with full jitter, capped at maxDelayMs', async () => {
    const delays: number[] = [];
    await withRetry(async () => { throw transient(); }, {
      maxRetries: 5, baseDelayMs: 1, maxDelayMs: 8, random: () => 1,
      onRetry: (_e, _n, delay) => delays.push(delay),
    }).catch(() => undefined);
    expect(delays).toEqual([1, 2, 4, 8, 8]);

    const jittered: number[] = [];
    await withRetry(async () => { throw transient(); }, {
      maxRetries: 2, baseDelayMs: 4, random: () => 0.5,
      onRetry: (_e, _n, delay) => jittered.push(delay),
    }).catch(() => undefined);
    expect(jittered).toEqual([2, 4]);
  });

  it('waits for Retry-After when it is within maxDelayMs', async () => {
    const delays: number[] = [];
    let calls = 0;
    const started = Date.now();
    await withRetry(async () => {
      if (calls++ === 0) throw new UpstreamError('upstream_error', 'rate limited', true, 429, 60);
      return 'ok';
    }, { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1_000, onRetry: (_e, _n, d) => delays.push(d) });
    expect(delays).toEqual([60]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
  });

  it('fails fast when Retry-After is longer than maxDelayMs', async () => {
    let calls = 0;
    const err = await withRetry(async () => {
      calls++;
      throw new UpstreamError('upstream_error', 'rate limited', true, 429, 120_000);
    }, { maxRetries: 5, maxDelayMs: 10_000 }).catch((e: unknown) => e as ProviderError);
    expect(calls).toBe(1);
    expect(err.detail).toBe('rate limited (asked to retry after 120 s)');
  });

  it('stops at once when the signal aborts during a backoff wait', async () => {
    const controller = new AbortController();
    let calls = 0;
    const started = Date.now();
    const pending = withRetry(async () => { calls++; throw transient(); }, { maxRetries: 5, baseDelayMs: 10_000, random: () => 1, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toBeInstanceOf(CancelledError);
    expect(calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('does not start when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    let calls = 0;
    await expect(withRetry(async () => { calls++; }, { maxRetries: 1, signal: controller.signal })).rejects.toBeInstanceOf(CancelledError);
    expect(calls).toBe(0);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('2')).toBe(2_000);
    expect(parseRetryAfter('0.5')).toBe(500);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
  });
});
