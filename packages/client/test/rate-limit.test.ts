/**
 * 429 handling against the real limiter: one free account spends its 100
 * requests of the current minute, then the SDK either throws (maxRetries 0)
 * or waits out Retry-After and repeats (maxRetries 1). The minute window is
 * aligned to the clock, so the wait is at most 60 s (30 s on average; the
 * file runs in parallel with the others).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeloomError } from '../src/index.js';
import { clientFor, newUser, recordingFetch, startTestServer, type TestServer } from './helpers.js';

describe('429 rate_limited: backoff honoring Retry-After', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t.close(); });

  it('maxRetries 0 throws rate_limited; maxRetries 1 waits at least Retry-After, then the retry succeeds', async () => {
    const { session, ip } = await newUser(t);
    const creds = { accessToken: session.accessToken, refreshToken: session.refreshToken };
    const spender = clientFor(t, creds, { maxRetries: 0 }, ip);

    // Spend the minute's 100 requests (the first 429 shows it is spent), all within one minute window.
    const toBoundary = 60_000 - (Date.now() % 60_000);
    if (toBoundary < 3_000) await new Promise((r) => setTimeout(r, toBoundary + 100));
    let spent = false;
    for (let i = 0; i < 12 && !spent; i++) {
      const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => spender.user.profile()));
      spent = outcomes.some((o) => o.status === 'rejected');
    }
    expect(spent).toBe(true);

    const noRetry = recordingFetch();
    const error = await clientFor(t, creds, { maxRetries: 0, fetch: noRetry.fetch }, ip).user.profile().catch((e: unknown) => e as CodeloomError);
    expect(CodeloomError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(error.detail).toMatch(/Per-minute limit of 100/);
    expect(error.retryAfter).toBeGreaterThanOrEqual(1);
    expect(error.retryAfter).toBeLessThanOrEqual(60);
    expect(noRetry.calls).toHaveLength(1);

    // A Retry-After longer than maxRetryWait is not waited for.
    const impatient = recordingFetch();
    const tooLong = await clientFor(t, creds, { maxRetries: 3, maxRetryWait: 0, fetch: impatient.fetch }, ip).user.profile().catch((e: unknown) => e as CodeloomError);
    expect(tooLong).toMatchObject({ code: 'rate_limited' });
    expect(impatient.calls).toHaveLength(1);

    const retrying = recordingFetch();
    const profile = await clientFor(t, creds, { maxRetries: 1, fetch: retrying.fetch }, ip).user.profile();
    expect(profile.id).toBe(session.user!.id);
    expect(retrying.calls.map((c) => c.status)).toEqual([429, 200]);
    const [first, second] = retrying.calls as [(typeof retrying.calls)[0], (typeof retrying.calls)[0]];
    const waited = second.at - first.at;
    const retryAfter = Number(first.retryAfter); // as the server sent it on the refused call
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(waited).toBeGreaterThanOrEqual(retryAfter * 1000);
  }, 120_000);
});
