/**
 * When a delivery that got no 2xx is tried again (CONTRACT §12.2): after 10 s, 30 s, 1 min, 5 min, 15 min, then
 * every hour, until 24 hours have passed since the event; then it is `failed`. Every figure is a multiple of
 * `baseMs` (10 s in production; CODELOOM_WEBHOOK_RETRY_BASE_MS shrinks the whole schedule, the 24 hours
 * included, for tests).
 */
const STEPS = [1, 3, 6, 30, 90, 360] as const;
export const WINDOW_STEPS = 8_640; // 24 h in steps of 10 s

export interface RetrySchedule {
  /** Milliseconds to wait after failed attempt `attempt` (1-based). */
  delayAfter(attempt: number): number;
  /** How long after the event deliveries are still tried. */
  windowMs: number;
}

export function retrySchedule(baseMs = 10_000): RetrySchedule {
  return {
    delayAfter: (attempt) => baseMs * STEPS[Math.min(Math.max(attempt, 1), STEPS.length) - 1]!,
    windowMs: baseMs * WINDOW_STEPS,
  };
}

/** The next attempt's time after failed attempt `attempt`, or null when it would fall past the window (the delivery fails). */
export function nextAttemptAt(schedule: RetrySchedule, eventAt: number, attempt: number, now: number): number | null {
  const at = now + schedule.delayAfter(attempt);
  return at - eventAt > schedule.windowMs ? null : at;
}
