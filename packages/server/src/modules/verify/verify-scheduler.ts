import { AppError, CancelledError, retryAfterHeader, wholeSeconds } from '../../errors.js';

/** The scheduler's caps (CODELOOM_VERIFY_CONCURRENCY, CODELOOM_VERIFY_PER_ACCOUNT, CODELOOM_VERIFY_QUEUE). */
export interface SchedulerLimits {
  /** Verifications running at once on this instance. */
  concurrency: number;
  /** Verifications of one organization running at once. */
  perAccount: number;
  /** Verifying requests of one organization admitted beyond `perAccount` (they wait); one more is refused. */
  queue: number;
  /** Longest Retry-After a refusal names, in seconds (the verification time limit). */
  maxRetryAfterS?: number;
}

export type TicketState = 'idle' | 'waiting' | 'running' | 'released';

/**
 * One place in a verification scheduler. A request that verifies takes one up front (`admit`), before its
 * model call, and keeps it until it ends: `idle` while the model writes or repairs, `waiting` for a slot,
 * `running` while its sandbox runs. Background work (workflow runs) takes one per verification.
 */
export interface VerifyTicket {
  /** The organization it counts against. */
  readonly org: string;
  readonly status: TicketState;
  /**
   * Fires when the scheduler takes the slot back while the verification runs (the cluster-wide scheduler,
   * when this instance could not keep its lease in Redis): the sandbox must stop. Never fires in memory.
   */
  readonly revoked?: AbortSignal | undefined;
  /**
   * Waits for a slot: the instance under CODELOOM_VERIFY_CONCURRENCY and the organization under its
   * per-account cap, oldest ticket first. Rejects with CancelledError, never starting, when `signal` fires
   * first (the ticket is then released). While running, the signal releases the slot at once.
   */
  acquire(signal?: AbortSignal): Promise<void>;
  /** The verification ended: its slot goes to the next waiter; the ticket stays (a repair may verify again). */
  finish(): void;
  /** The owner is done (or gone): slot and place are given back. Idempotent. */
  release(): void;
}

/** What runs and waits (on this instance). */
export interface SchedulerStats { running: number; waiting: number; admitted: number }

/**
 * What the verification service asks of a scheduler: this file's VerifyScheduler (one instance, in memory)
 * or RedisVerifyScheduler (redis-verify-scheduler.ts: the per-organization caps across every instance
 * sharing REDIS_URL).
 */
export interface VerifyScheduling {
  readonly limits: SchedulerLimits;
  /** A verifying request's place, or 429 `rate_limited` with Retry-After when its organization has no place left. */
  admit(org: string): VerifyTicket | Promise<VerifyTicket>;
  /** Background work's ticket: waits its turn under the same caps, takes no place, is never refused. */
  background(org: string | undefined): VerifyTicket;
  /** What runs and waits on this instance: all, or one organization's. */
  stats(org?: string): SchedulerStats;
  /** Stops timers and connections of its own. */
  close(): Promise<void>;
}

/** The 429 of a full organization: its caps, where they hold, and when to try again. */
export function queueFull(limits: SchedulerLimits, seconds: number, where: string): AppError {
  const cap = limits.perAccount + limits.queue;
  return new AppError('rate_limited', `At most ${limits.perAccount} verification${limits.perAccount === 1 ? '' : 's'} of an organization run at once and ${limits.queue} more wait ${where}; this organization has ${cap} in progress. Try again in ${seconds} s.`, { headers: retryAfterHeader(seconds) });
}

/** Whole seconds of a Retry-After from the milliseconds a place should still be held: at least 1, at most the verification time limit. */
export function retryAfterSeconds(limits: SchedulerLimits, leftMs: number): number {
  return Math.min(wholeSeconds(leftMs / 1000), Math.max(1, limits.maxRetryAfterS ?? Infinity));
}

interface OrgState {
  /** Tickets of the organization holding a slot now (requests and background work). */
  running: number;
  /** Live request tickets (admitted, not released): at most perAccount + queue. */
  admitted: Set<MemoryVerifyTicket>;
}

/** A ticket's lifetime guessed before any ended (Retry-After of the first refusals). */
export const DEFAULT_LIFETIME_MS = 10_000;

/** A place in the in-memory scheduler. */
export class MemoryVerifyTicket implements VerifyTicket {
  /** @internal */ state: TicketState = 'idle';
  /** @internal */ wake: { resolve: () => void; reject: (error: Error) => void } | undefined;
  /** @internal */ unlisten: (() => void) | undefined;
  /** @internal */ readonly since: number;

  constructor(
    private readonly scheduler: VerifyScheduler,
    /** The organization it counts against. */
    readonly org: string,
    /** Admission order: the oldest waiter goes first; a repair keeps its request's place. */
    readonly seq: number,
    /** A request's place (counted against the organization's queue), not background work. */
    readonly counted: boolean,
  ) {
    this.since = scheduler.now();
  }

  get status(): TicketState {
    return this.state;
  }

  acquire(signal?: AbortSignal): Promise<void> {
    return this.scheduler.acquire(this, signal);
  }

  finish(): void {
    this.scheduler.finish(this);
  }

  release(): void {
    this.scheduler.release(this);
  }
}

/**
 * Admission and slots for verifications on one instance, in memory (without REDIS_URL). A slot goes to the
 * oldest waiting ticket whose organization runs fewer than `perAccount`, so one organization's queue never
 * holds back another whose own slot is free. Each organization has at most `perAccount + queue` verifying requests admitted;
 * `admit` refuses one more with 429 `rate_limited` and a Retry-After.
 */
export class VerifyScheduler implements VerifyScheduling {
  private running = 0;
  private seq = 0;
  private readonly orgs = new Map<string, OrgState>();
  private readonly waiting = new Set<MemoryVerifyTicket>();
  /** Moving average of how long a request's ticket lives (admission to release), for Retry-After. */
  private lifetimeMs: number | undefined;

  constructor(readonly limits: SchedulerLimits, readonly now: () => number = Date.now) {}

  /**
   * A verifying request's place, taken before any work: `perAccount` of its organization may run and
   * `queue` more wait; beyond that a 429 `rate_limited` with Retry-After (when the oldest place should free).
   */
  admit(org: string): MemoryVerifyTicket {
    const state = this.org(org);
    if (state.admitted.size >= this.limits.perAccount + this.limits.queue) throw queueFull(this.limits, this.retryAfter(state), 'on this server');
    const ticket = new MemoryVerifyTicket(this, org, ++this.seq, true);
    state.admitted.add(ticket);
    return ticket;
  }

  /**
   * Background work's ticket (a workflow run's verification): it waits its turn under the same caps but
   * takes no queue place and is never refused (the run executor bounds how many runs execute). Without an
   * organization (internal callers) only the instance cap applies.
   */
  background(org: string | undefined): MemoryVerifyTicket {
    const seq = ++this.seq;
    return new MemoryVerifyTicket(this, org ?? `\0internal:${seq}`, seq, false);
  }

  /** What runs and waits now: the instance's counts, or one organization's. */
  stats(org?: string): SchedulerStats {
    if (org !== undefined) {
      const state = this.orgs.get(org);
      return { running: state?.running ?? 0, waiting: [...this.waiting].filter((t) => t.org === org).length, admitted: state?.admitted.size ?? 0 };
    }
    let admitted = 0;
    for (const s of this.orgs.values()) admitted += s.admitted.size;
    return { running: this.running, waiting: this.waiting.size, admitted };
  }

  async close(): Promise<void> {}

  /** @internal */
  acquire(ticket: MemoryVerifyTicket, signal: AbortSignal | undefined): Promise<void> {
    if (ticket.state === 'released') return Promise.reject(new Error('this verification ticket was released'));
    if (ticket.state !== 'idle') return Promise.reject(new Error(`this verification ticket is already ${ticket.state}`));
    if (signal?.aborted) {
      ticket.release();
      return Promise.reject(new CancelledError());
    }
    return new Promise<void>((resolve, reject) => {
      ticket.state = 'waiting';
      ticket.wake = { resolve, reject };
      if (signal) {
        // Waiting: the ticket leaves the queue and never starts. Running: the slot is given back at once (the runner kills the sandbox on the same signal).
        const onAbort = () => ticket.release();
        signal.addEventListener('abort', onAbort, { once: true });
        ticket.unlisten = () => signal.removeEventListener('abort', onAbort);
      }
      this.org(ticket.org);
      this.waiting.add(ticket);
      this.pump();
    });
  }

  /** @internal */
  finish(ticket: MemoryVerifyTicket): void {
    if (ticket.state !== 'running') return;
    this.stop(ticket);
    ticket.state = 'idle';
    this.pump();
  }

  /** @internal */
  release(ticket: MemoryVerifyTicket): void {
    if (ticket.state === 'released') return;
    const before = ticket.state;
    if (before === 'running') this.stop(ticket);
    if (before === 'waiting') {
      // Never started: whoever waits on it hears CancelledError.
      this.waiting.delete(ticket);
      ticket.unlisten?.();
      ticket.unlisten = undefined;
      const wake = ticket.wake;
      ticket.wake = undefined;
      wake?.reject(new CancelledError());
    }
    ticket.state = 'released';
    const state = this.orgs.get(ticket.org);
    if (state && ticket.counted && state.admitted.delete(ticket)) {
      const lived = this.now() - ticket.since;
      this.lifetimeMs = this.lifetimeMs === undefined ? lived : this.lifetimeMs * 0.8 + lived * 0.2;
    }
    if (state) this.forget(ticket.org, state);
    this.pump();
  }

  /** Gives free slots to the oldest waiters whose organization is under its cap. */
  private pump(): void {
    while (this.running < this.limits.concurrency) {
      let next: MemoryVerifyTicket | undefined;
      for (const t of this.waiting) {
        if ((this.orgs.get(t.org)?.running ?? 0) < this.limits.perAccount && (!next || t.seq < next.seq)) next = t;
      }
      if (!next) return;
      this.waiting.delete(next);
      next.state = 'running';
      this.running++;
      this.org(next.org).running++;
      const wake = next.wake;
      next.wake = undefined;
      wake?.resolve();
    }
  }

  private stop(ticket: MemoryVerifyTicket): void {
    ticket.unlisten?.();
    ticket.unlisten = undefined;
    this.running--;
    const state = this.orgs.get(ticket.org);
    if (state) state.running--;
  }

  private org(org: string): OrgState {
    let state = this.orgs.get(org);
    if (!state) {
      state = { running: 0, admitted: new Set() };
      this.orgs.set(org, state);
    }
    return state;
  }

  /** An organization with nothing admitted, running or waiting is dropped from the map. */
  private forget(org: string, state: OrgState): void {
    if (state.running || state.admitted.size) return;
    for (const t of this.waiting) if (t.org === org) return;
    this.orgs.delete(org);
  }

  /** Seconds until the organization's oldest place should free: the usual lifetime of a place minus its age. */
  private retryAfter(state: OrgState): number {
    const now = this.now();
    let oldest = now;
    for (const t of state.admitted) oldest = Math.min(oldest, t.since);
    return retryAfterSeconds(this.limits, (this.lifetimeMs ?? DEFAULT_LIFETIME_MS) - (now - oldest));
  }
}
