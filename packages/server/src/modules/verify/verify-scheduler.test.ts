/**
 * The verification scheduler on its own: the instance cap, the per-organization cap, the per-organization
 * queue (429 with Retry-After beyond it), fairness among organizations, a waiter whose caller leaves (never
 * starts, place freed), a running one whose caller leaves (slot freed at once), repairs and background work.
 */
import { describe, expect, it } from 'vitest';
import { AppError, CancelledError, retryAfterOf } from '../../errors.js';
import { VerifyScheduler, type VerifyTicket } from './verify-scheduler.js';

/** A ticket's acquire, observed: whether it started, or how it failed. */
function track(ticket: VerifyTicket, signal?: AbortSignal) {
  const t = { ticket, started: false, error: undefined as unknown, promise: undefined as unknown as Promise<void> };
  t.promise = ticket.acquire(signal).then(() => { t.started = true; }, (error: unknown) => { t.error = error; });
  return t;
}
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected a refusal');
}

describe('VerifyScheduler', () => {
  it('runs at most perAccount of one organization and concurrency in all; the rest wait', async () => {
    const s = new VerifyScheduler({ concurrency: 2, perAccount: 1, queue: 4 });
    const a1 = track(s.admit('org_a'));
    const a2 = track(s.admit('org_a'));
    const b1 = track(s.admit('org_b'));
    const c1 = track(s.admit('org_c'));
    await settle();
    expect([a1.started, a2.started, b1.started, c1.started]).toEqual([true, false, true, false]);
    expect(s.stats()).toEqual({ running: 2, waiting: 2, admitted: 4 });
    expect(s.stats('org_a')).toEqual({ running: 1, waiting: 1, admitted: 2 });
    a1.ticket.release();
    await settle();
    // The oldest waiter whose organization is under its cap: org_a's second (admitted before org_c's).
    expect([a2.started, c1.started]).toEqual([true, false]);
    b1.ticket.release();
    await settle();
    expect(c1.started).toBe(true);
  });

  it('one organization\'s waiters never hold back another whose own slot is free', async () => {
    const s = new VerifyScheduler({ concurrency: 2, perAccount: 1, queue: 4 });
    const a1 = track(s.admit('org_a'));
    const b1 = track(s.admit('org_b'));
    await settle();
    const a2 = track(s.admit('org_a'));
    const a3 = track(s.admit('org_a'));
    const c1 = track(s.admit('org_c'));
    await settle();
    expect([a1.started, b1.started, a2.started, a3.started, c1.started]).toEqual([true, true, false, false, false]);
    // A slot frees; org_a's older waiters are at their cap, so org_c's newer one takes it.
    b1.ticket.release();
    await settle();
    expect([a2.started, a3.started, c1.started]).toEqual([false, false, true]);
    a1.ticket.release();
    await settle();
    expect([a2.started, a3.started]).toEqual([true, false]);
  });

  it('admits perAccount + queue requests of one organization; one more is a 429 with Retry-After, others are unaffected', async () => {
    const s = new VerifyScheduler({ concurrency: 4, perAccount: 1, queue: 1, maxRetryAfterS: 120 });
    const first = s.admit('org_a');
    s.admit('org_a');
    const error = refusal(() => s.admit('org_a'));
    expect(error.code).toBe('rate_limited');
    expect(error.message).toMatch(/At most 1 verification of an organization run at once and 1 more wait/);
    expect(retryAfterOf(error)).toBeGreaterThanOrEqual(1);
    expect(retryAfterOf(error)).toBeLessThanOrEqual(120);
    expect(s.admit('org_b')).toBeDefined();
    first.release();
    expect(s.admit('org_a')).toBeDefined();
  });

  it('Retry-After is the usual lifetime of a place minus the age of the organization\'s oldest, at least 1 s', () => {
    let now = 1_000_000;
    const s = new VerifyScheduler({ concurrency: 1, perAccount: 1, queue: 0, maxRetryAfterS: 120 }, () => now);
    const t = s.admit('org_a');
    now += 30_000;
    t.release(); // a place lived 30 s
    s.admit('org_a');
    now += 10_000;
    expect(retryAfterOf(refusal(() => s.admit('org_a')))).toBe(20);
    now += 60_000;
    expect(retryAfterOf(refusal(() => s.admit('org_a')))).toBe(1);
  });

  it('a waiter whose caller leaves is removed at once, never starts and frees its place', async () => {
    const s = new VerifyScheduler({ concurrency: 1, perAccount: 1, queue: 1 });
    const running = track(s.admit('org_a'));
    const gone = new AbortController();
    const waiter = track(s.admit('org_a'), gone.signal);
    await settle();
    expect(s.stats('org_a')).toEqual({ running: 1, waiting: 1, admitted: 2 });
    gone.abort();
    // At once: no tick needed for the queue to free.
    expect(s.stats('org_a')).toEqual({ running: 1, waiting: 0, admitted: 1 });
    expect(waiter.ticket.status).toBe('released');
    const next = track(s.admit('org_a'));
    running.ticket.release();
    await settle();
    expect(waiter.started).toBe(false);
    expect(waiter.error).toBeInstanceOf(CancelledError);
    expect(next.started).toBe(true);
  });

  it('a caller already gone never waits', async () => {
    const s = new VerifyScheduler({ concurrency: 1, perAccount: 1, queue: 1 });
    const t = track(s.admit('org_a'), AbortSignal.abort());
    await settle();
    expect(t.started).toBe(false);
    expect(t.error).toBeInstanceOf(CancelledError);
    expect(s.stats()).toEqual({ running: 0, waiting: 0, admitted: 0 });
  });

  it('a running verification whose caller leaves gives its slot to the next waiter at once', async () => {
    const s = new VerifyScheduler({ concurrency: 1, perAccount: 1, queue: 4 });
    const gone = new AbortController();
    const running = track(s.admit('org_a'), gone.signal);
    const other = track(s.admit('org_b'));
    await settle();
    expect([running.started, other.started]).toEqual([true, false]);
    gone.abort();
    expect(s.stats()).toMatchObject({ running: 1, waiting: 0, admitted: 1 });
    await settle();
    expect(other.started).toBe(true);
    // The owner's own release and finish afterwards change nothing.
    running.ticket.finish();
    running.ticket.release();
    expect(s.stats()).toEqual({ running: 1, waiting: 0, admitted: 1 });
  });

  it('a request keeps its place across repairs: finish frees the slot, the next attempt waits with its admission age', async () => {
    const s = new VerifyScheduler({ concurrency: 1, perAccount: 2, queue: 2 });
    const a = s.admit('org_a');
    const b = s.admit('org_b');
    const first = track(a);
    await settle();
    expect(first.started).toBe(true);
    const bRun = track(b);
    a.finish(); // attempt 1 over: the slot goes to b while a's model repairs
    await settle();
    expect(bRun.started).toBe(true);
    expect(s.stats('org_a')).toEqual({ running: 0, waiting: 0, admitted: 1 });
    const c = track(s.admit('org_c'));
    const second = track(a); // a's repaired code waits, older than c
    b.release();
    await settle();
    expect([second.started, c.started]).toEqual([true, false]);
    a.release();
    await settle();
    expect(c.started).toBe(true);
  });

  it('background work waits its turn under the per-account cap but takes no queue place and is never refused', async () => {
    const s = new VerifyScheduler({ concurrency: 4, perAccount: 1, queue: 0 });
    const request = track(s.admit('org_a'));
    const bg1 = track(s.background('org_a'));
    const bg2 = track(s.background('org_a'));
    await settle();
    expect([request.started, bg1.started, bg2.started]).toEqual([true, false, false]);
    expect(s.stats('org_a')).toEqual({ running: 1, waiting: 2, admitted: 1 });
    request.ticket.release();
    await settle();
    expect([bg1.started, bg2.started]).toEqual([true, false]);
    bg1.ticket.release();
    await settle();
    expect(bg2.started).toBe(true);
    // Without an organization, only the instance cap applies.
    const internal = [track(s.background(undefined)), track(s.background(undefined)), track(s.background(undefined))];
    await settle();
    expect(internal.map((t) => t.started)).toEqual([true, true, true]);
    bg2.ticket.release();
    for (const t of internal) t.ticket.release();
    expect(s.stats()).toEqual({ running: 0, waiting: 0, admitted: 0 });
  });

  it('a released ticket cannot run again', async () => {
    const s = new VerifyScheduler({ concurrency: 1, perAccount: 1, queue: 1 });
    const t = s.admit('org_a');
    t.release();
    await expect(t.acquire()).rejects.toThrow(/released/);
    expect(s.stats()).toEqual({ running: 0, waiting: 0, admitted: 0 });
  });
});
