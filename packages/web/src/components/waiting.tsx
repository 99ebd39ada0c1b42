import { CodeloomError } from '@codeloom/client';
import { useEffect, useState } from 'preact/hooks';

/**
 * Why a call or a run waits (or was refused) for a window or a budget, and until when: the
 * playground's generation while the SDK waits out a 429's Retry-After, and a run's `waiting` field.
 */
export interface Wait {
  /** `rate_limited` (a window) or `budget_exceeded` (a dollar budget). */
  code: string;
  /** The server's reason (its problem detail or the run's waiting message). */
  message: string;
  /** When it resumes or resets, as `Date.now()` ms; null when it never does (a `total` budget). */
  until: number | null;
}

/** Re-renders every second while `active` (for a countdown); returns now in ms. */
export function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}

/** The window a rate_limited message names, in words: "your tokens-per-minute window", "this API key's monthly token window". */
export function windowWords(message: string): string {
  const whose = /this API key's/i.test(message) ? "this API key's" : 'your';
  if (/tokens-per-minute/i.test(message)) return `${whose} tokens-per-minute window`;
  if (/monthly token/i.test(message)) return `${whose} monthly token window`;
  if (/verification/i.test(message)) return 'a verification place';
  if (/request/i.test(message)) return `${whose} request window`;
  return `${whose} rate limit window`;
}

/** "14:03:21" today, "26 Nov 2026, 00:00:00" on another day (the browser's time zone). */
export function clockTime(ms: number, now = Date.now()): string {
  const at = new Date(ms);
  const time = at.toLocaleTimeString('en-GB');
  return at.toDateString() === new Date(now).toDateString() ? time : `${at.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric' })}, ${time}`;
}

/** "36 s", "4 min 5 s", "3 h 12 min", "2 d 4 h". */
export function countdown(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h${Math.floor((s % 3600) / 60) ? ` ${Math.floor((s % 3600) / 60)} min` : ''}`;
  return `${Math.floor(s / 86_400)} d${Math.floor((s % 86_400) / 3600) ? ` ${Math.floor((s % 86_400) / 3600)} h` : ''}`;
}

/**
 * The headline of a wait, without the countdown (for live regions, announced once):
 * "Waiting for your tokens-per-minute window — resumes at 14:03:21",
 * "Budget reached: <reason> — resets at 00:00:00", or for a refusal that is not being waited out
 * "Rate limit reached — try again at 14:03:21".
 */
export function waitHeadline(wait: Wait, mode: 'waiting' | 'refused', now = Date.now()): string {
  const at = wait.until === null ? '' : clockTime(wait.until, now);
  if (wait.code === 'budget_exceeded') {
    const reason = `Budget reached: ${wait.message.replace(/\.$/, '')}`;
    if (wait.until === null) return reason; // a total budget: the server's reason says it does not reset
    return mode === 'waiting' ? `${reason} — resets at ${at}; waiting until then` : `${reason} — resets at ${at}`;
  }
  if (mode === 'waiting') return `Waiting for ${windowWords(wait.message)} — resumes at ${at}`;
  return wait.until === null ? 'Rate limit reached' : `Rate limit reached — try again at ${at}`;
}

/** A wait's full line with its countdown: the headline plus "(in 36 s)", or "(resuming now…)" once the time has come. */
export function waitLine(wait: Wait, mode: 'waiting' | 'refused', now: number): string {
  const head = waitHeadline(wait, mode, now);
  if (wait.until === null) return head;
  const left = wait.until - now;
  return `${head} (${left > 0 ? `in ${countdown(left)}` : mode === 'waiting' ? 'resuming now…' : 'now'})`;
}

/**
 * A notice of a wait: the line with its countdown (ticking each second, not a live region: give the
 * headline to a status element to have it announced), and the server's reason under it.
 */
export function WaitNotice({ wait, mode, label }: { wait: Wait; mode: 'waiting' | 'refused'; label: string }) {
  const now = useNow(wait.until !== null);
  const budget = wait.code === 'budget_exceeded';
  return (
    <section class="notice" data-kind={budget ? 'budget' : 'window'} data-mode={mode} aria-label={label} data-testid="wait-notice">
      <p class="notice-line">
        <strong>{waitLine(wait, mode, now)}</strong>
      </p>
      {!budget && <p class="notice-reason">{wait.message}</p>}
    </section>
  );
}

/** The wait of a 429 the SDK is about to wait out (onRetry), or undefined for other retries. */
export function waitOfRetry(error: CodeloomError, delayMs: number): Wait | undefined {
  if (error.status !== 429 || (error.code !== 'rate_limited' && error.code !== 'budget_exceeded')) return undefined;
  return { code: error.code, message: error.detail, until: Date.now() + delayMs };
}

/** The refusal of a 429 `rate_limited` or `budget_exceeded` that ended a call, or undefined for other errors. */
export function refusalOf(error: unknown): Wait | undefined {
  if (!CodeloomError.isInstance(error) || error.status !== 429 || (error.code !== 'rate_limited' && error.code !== 'budget_exceeded')) return undefined;
  return { code: error.code, message: error.detail, until: error.retryAfter === undefined ? null : Date.now() + error.retryAfter * 1000 };
}
