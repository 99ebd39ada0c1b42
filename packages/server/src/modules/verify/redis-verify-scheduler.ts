import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AppError, CancelledError, retryAfterHeader } from '../../errors.js';
import { asDependencyError } from '../../storage/dependency-errors.js';
import { DEFAULT_LIFETIME_MS, queueFull, retryAfterSeconds, type SchedulerLimits, type SchedulerStats, type TicketState, type VerifyScheduling, type VerifyTicket } from './verify-scheduler.js';

/*
 * The per-organization caps of CONTRACT §12.1 across every instance sharing one Redis. Per organization,
 * five keys `<prefix>verify:{<org>}:…` (one hash tag, so a script's keys stay in one slot):
 *   lease    ZSET ticket → expiry (ms, Redis clock): every ticket Redis knows; its holder renews it
 *   places   ZSET ticket → admission time (ms, Redis clock, fractional): request tickets; at most PER_ACCOUNT + QUEUE
 *   queue    ZSET ticket → admission time: tickets waiting for a slot, oldest first (a repair keeps its place)
 *   running  ZSET ticket → start time: tickets holding a slot; at most PER_ACCOUNT
 *   stats    HASH life → moving average of how long a place is held (Retry-After)
 * Every script first drops the tickets whose lease ran out (an instance that died or lost Redis) from all
 * four sets, and publishes the organization on `<prefix>verify:freed` whenever a slot or a waiting place
 * frees, so waiters on every instance look again at once (and every `pollMs` without a message).
 * KEYS = lease, places, queue, running, stats; ARGV = channel, org, lease ms, then the script's own.
 */
const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local exact = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local lease = tonumber(ARGV[3])
local freed = false
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
for _, id in ipairs(dead) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
  if redis.call('ZREM', KEYS[3], id) == 1 then freed = true end
  if redis.call('ZREM', KEYS[4], id) == 1 then freed = true end
end
local function done(result)
  if freed then redis.call('PUBLISH', ARGV[1], ARGV[2]) end
  for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], 3 * lease) end
  return result
end
`;

/** ARGV[4] ticket, ARGV[5] PER_ACCOUNT + QUEUE, ARGV[6] lifetime assumed before any place ended. → {1, 0} admitted, or {0, ms the oldest place should still be held}. */
const ADMIT = `${PRELUDE}
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  local life = tonumber(redis.call('HGET', KEYS[5], 'life') or ARGV[6])
  return done({0, math.floor(life - (exact - tonumber(oldest[2])))})
end
redis.call('ZADD', KEYS[2], exact, ARGV[4])
redis.call('ZADD', KEYS[1], now + lease, ARGV[4])
return done({1, 0})
`;

/**
 * Into the line: ARGV[4] ticket, ARGV[5] '1' for a request's place (it must still hold it: 0 when its lease
 * ran out; it lines up by its admission time) or '0' for background work (leased here, lines up now).
 */
const ENQUEUE = `${PRELUDE}
local id = ARGV[4]
local order
if ARGV[5] == '1' then
  order = redis.call('ZSCORE', KEYS[2], id)
  if not order or not redis.call('ZSCORE', KEYS[1], id) then return done(0) end
else
  order = exact
end
redis.call('ZADD', KEYS[1], now + lease, id)
if redis.call('ZREM', KEYS[4], id) == 1 then freed = true end
redis.call('ZADD', KEYS[3], order, id)
return done(1)
`;

/**
 * Slots for this instance's waiters: ARGV[4] PER_ACCOUNT, ARGV[5…] candidates (as many as this instance has
 * free slots). A candidate starts when it is among the organization's (PER_ACCOUNT − running) oldest
 * waiters, wherever they wait: first come, first served across instances. → the tickets started.
 */
const START = `${PRELUDE}
local free = tonumber(ARGV[4]) - redis.call('ZCARD', KEYS[4])
local started = {}
if free > 0 then
  local first = {}
  for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, free - 1)) do first[id] = true end
  for i = 5, #ARGV do
    local id = ARGV[i]
    if first[id] then
      redis.call('ZREM', KEYS[3], id)
      redis.call('ZADD', KEYS[4], exact, id)
      redis.call('ZADD', KEYS[1], now + lease, id)
      table.insert(started, id)
    end
  end
end
return done(started)
`;

/** Out of the slot and the line, the place kept (a repair may verify again): ARGV[4] ticket. */
const LEAVE = `${PRELUDE}
local id = ARGV[4]
if redis.call('ZREM', KEYS[4], id) == 1 then freed = true end
if redis.call('ZREM', KEYS[3], id) == 1 then freed = true end
redis.call('ZADD', KEYS[1], 'XX', now + lease, id)
return done(1)
`;

/** Everything given back: ARGV[4] ticket. A request's place updates the usual lifetime of a place. */
const RELEASE = `${PRELUDE}
local id = ARGV[4]
local since = redis.call('ZSCORE', KEYS[2], id)
if since then
  local lived = exact - tonumber(since)
  local life = tonumber(redis.call('HGET', KEYS[5], 'life') or '-1')
  if life < 0 then life = lived else life = life * 0.8 + lived * 0.2 end
  redis.call('HSET', KEYS[5], 'life', math.floor(life))
  redis.call('PEXPIRE', KEYS[5], 86400000)
end
redis.call('ZREM', KEYS[1], id)
redis.call('ZREM', KEYS[2], id)
if redis.call('ZREM', KEYS[3], id) == 1 then freed = true end
if redis.call('ZREM', KEYS[4], id) == 1 then freed = true end
return done(1)
`;

/**
 * The holder renews its tickets' leases: ARGV[4…] pairs (ticket, what the holder does: 'r' running, 'w'
 * waiting, 'i' neither), and Redis is set to agree (a slot or line entry left by a command whose answer
 * was lost is dropped, a waiter missing from the line goes back in). → tickets whose lease is gone.
 */
const RENEW = `${PRELUDE}
local lost = {}
for i = 4, #ARGV - 1, 2 do
  local id, what = ARGV[i], ARGV[i + 1]
  if redis.call('ZSCORE', KEYS[1], id) then
    redis.call('ZADD', KEYS[1], now + lease, id)
    if what == 'r' then
      redis.call('ZREM', KEYS[3], id)
      redis.call('ZADD', KEYS[4], 'NX', exact, id)
    elseif what == 'i' then
      if redis.call('ZREM', KEYS[3], id) == 1 then freed = true end
      if redis.call('ZREM', KEYS[4], id) == 1 then freed = true end
    elseif not redis.call('ZSCORE', KEYS[3], id) and not redis.call('ZSCORE', KEYS[4], id) then
      redis.call('ZADD', KEYS[3], redis.call('ZSCORE', KEYS[2], id) or exact, id)
    end
  else
    table.insert(lost, id)
  end
end
return done(lost)
`;

/** The organization across instances: {running, waiting, places}. */
const COUNT = `${PRELUDE}
return done({redis.call('ZCARD', KEYS[4]), redis.call('ZCARD', KEYS[3]), redis.call('ZCARD', KEYS[2])})
`;

type Script = (numKeys: number, ...args: Array<string | number>) => Promise<unknown>;
type ScriptRedis = Redis & Record<'codeloomVerifyAdmit' | 'codeloomVerifyEnqueue' | 'codeloomVerifyStart' | 'codeloomVerifyLeave' | 'codeloomVerifyRelease' | 'codeloomVerifyRenew' | 'codeloomVerifyCount', Script>;

export interface RedisSchedulerOptions {
  /** Key prefix (CODELOOM_REDIS_PREFIX): keys `<prefix>verify:{<org>}:…`, channel `<prefix>verify:freed`. */
  prefix?: string;
  /** How long Redis keeps a ticket whose holder stopped renewing it (an instance that died), in ms. */
  leaseMs?: number;
  /** How often the holder renews its tickets, in ms; one not renewed for `leaseMs − renewMs` is given up (its sandbox is stopped). */
  renewMs?: number;
  /** How often waiters look again without a message, in ms (and notice leases that ran out). */
  pollMs?: number;
  /** Told of failures nobody waits for (a renewal, a release while Redis is unreachable); the leases put them right. */
  onError?: (error: unknown) => void;
}

const LEASE_MS = 20_000;
const RENEW_MS = 5_000;
const POLL_MS = 2_000;

/** A verification's place when Redis no longer has it (its lease ran out: Redis unreachable for too long, or emptied). */
function placeLost(): AppError {
  return new AppError('service_unavailable', 'This verification lost its place in the organization\'s line: Redis was unreachable for too long or lost its data; try again shortly.', { headers: retryAfterHeader(1) });
}

const asUnavailable = (error: unknown) => (error instanceof Error ? asDependencyError(error) ?? error : new Error(String(error)));

/** A place in the cluster-wide scheduler. */
class RedisTicket implements VerifyTicket {
  state: TicketState = 'idle';
  /** Redis has (or is being given) this ticket: its operations go to Redis and its lease is renewed. */
  leased = false;
  /** Redis no longer has it (or it could not be renewed in time): it can never start again. */
  lost = false;
  /** When (performance.now) the last call that renewed its lease was sent. */
  confirmedAt = 0;
  wake: { resolve: () => void; reject: (error: Error) => void } | undefined;
  unlisten: (() => void) | undefined;
  /** Its Redis operations, one after another (a release is never overtaken by the enqueue before it). */
  chain: Promise<unknown> = Promise.resolve();
  readonly revoker = new AbortController();

  constructor(
    private readonly scheduler: RedisVerifyScheduler,
    readonly id: string,
    readonly org: string,
    /** Local order (the oldest waiter of this instance is offered a free slot first). */
    readonly seq: number,
    /** A request's place (counted against the organization's line), not background work. */
    readonly counted: boolean,
    /** No organization (internal callers): only this instance's cap applies, Redis is not asked. */
    readonly local: boolean,
  ) {}

  get status(): TicketState { return this.state; }
  get revoked(): AbortSignal { return this.revoker.signal; }
  acquire(signal?: AbortSignal): Promise<void> { return this.scheduler.acquire(this, signal); }
  finish(): void { this.scheduler.finish(this); }
  release(): void { this.scheduler.release(this); }
}

/**
 * The verification scheduler of instances sharing REDIS_URL. CODELOOM_VERIFY_PER_ACCOUNT running and
 * PER_ACCOUNT + CODELOOM_VERIFY_QUEUE admitted per organization hold across all of them (Lua scripts over
 * the organization's keys, above); CODELOOM_VERIFY_CONCURRENCY stays this instance's own (it protects this
 * host's CPU): a free local slot is offered to this instance's waiters, oldest first, and one starts when
 * Redis says its organization has a slot and it is among the organization's oldest waiters cluster-wide.
 *
 * Every ticket Redis holds has a lease this instance renews every `renewMs`; an instance that dies stops
 * renewing and its places and slots free themselves after `leaseMs`. An instance that cannot renew for
 * `leaseMs − renewMs` gives its tickets up first: a waiter fails with 503, a running verification is
 * stopped through `ticket.revoked`. Redis unreachable: `admit` and a waiting `acquire` fail with 503
 * `service_unavailable` and Retry-After: 1, like every request that needs Redis.
 */
export class RedisVerifyScheduler implements VerifyScheduling {
  private readonly redis: ScriptRedis;
  private readonly prefix: string;
  private readonly channel: string;
  private readonly leaseMs: number;
  private readonly renewMs: number;
  private readonly pollMs: number;
  private readonly onError: (error: unknown) => void;
  private readonly instance = randomBytes(6).toString('hex');
  private seq = 0;
  /** Slots of this instance in use. */
  private running = 0;
  /** Every ticket not released, for renewals and stats. */
  private readonly live = new Set<RedisTicket>();
  /** Tickets in the line (Redis has them queued), waiting for this instance to offer them a slot. */
  private readonly waiting = new Set<RedisTicket>();
  private readonly pending = new Set<Promise<unknown>>();
  private pumping = false;
  private pumpAgain = false;
  private renewing = false;
  private renewTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private subscriber: Redis | undefined;
  private closed = false;

  constructor(redis: Redis, readonly limits: SchedulerLimits, options: RedisSchedulerOptions = {}) {
    const scripts = { codeloomVerifyAdmit: ADMIT, codeloomVerifyEnqueue: ENQUEUE, codeloomVerifyStart: START, codeloomVerifyLeave: LEAVE, codeloomVerifyRelease: RELEASE, codeloomVerifyRenew: RENEW, codeloomVerifyCount: COUNT };
    for (const [name, lua] of Object.entries(scripts)) redis.defineCommand(name, { lua });
    this.redis = redis as ScriptRedis;
    this.prefix = options.prefix ?? 'codeloom:';
    this.channel = `${this.prefix}verify:freed`;
    this.leaseMs = options.leaseMs ?? LEASE_MS;
    this.renewMs = Math.min(options.renewMs ?? RENEW_MS, Math.floor(this.leaseMs / 2));
    this.pollMs = options.pollMs ?? POLL_MS;
    this.onError = options.onError ?? (() => {});
  }

  /**
   * A verifying request's place in its organization's line, across instances: 429 `rate_limited` with
   * Retry-After (the usual lifetime of a place minus the age of the organization's oldest) when PER_ACCOUNT
   * + QUEUE of its requests are in progress anywhere; 503 when Redis is unreachable.
   */
  async admit(org: string): Promise<VerifyTicket> {
    const ticket = this.ticket(org, true);
    const sent = performance.now();
    let answer: [number, number];
    try {
      answer = await this.redis.codeloomVerifyAdmit(5, ...this.args(org), ticket.id, this.limits.perAccount + this.limits.queue, DEFAULT_LIFETIME_MS) as [number, number];
    } catch (error) {
      // A place the script took before its answer was lost expires with its lease (nobody renews it).
      throw asUnavailable(error);
    }
    if (Number(answer[0]) !== 1) throw queueFull(this.limits, retryAfterSeconds(this.limits, Number(answer[1])), 'across all instances');
    ticket.leased = true;
    ticket.confirmedAt = sent;
    this.live.add(ticket);
    this.renewals();
    return ticket;
  }

  background(org: string | undefined): VerifyTicket {
    return this.ticket(org, false);
  }

  /** This instance's share: the slots it uses, its waiters and the places its requests hold (all, or one organization's). */
  stats(org?: string): SchedulerStats {
    let running = 0;
    let waiting = 0;
    let admitted = 0;
    for (const t of this.live) {
      if (org !== undefined && t.org !== org) continue;
      if (t.state === 'running') running++;
      if (t.state === 'waiting') waiting++;
      if (t.counted) admitted++;
    }
    return { running, waiting, admitted };
  }

  /** One organization across every instance: running, waiting, and the places its requests hold. */
  async clusterStats(org: string): Promise<SchedulerStats> {
    const [running, waiting, admitted] = await this.redis.codeloomVerifyCount(5, ...this.args(org)) as number[];
    return { running: Number(running), waiting: Number(waiting), admitted: Number(admitted) };
  }

  /** Resolves once every Redis operation started so far has answered (tests). */
  async settled(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.renewTimer);
    clearInterval(this.pollTimer);
    this.renewTimer = this.pollTimer = undefined;
    // A subscriber has nothing to flush: dropped at once (a QUIT could wait for a Redis that is down).
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }

  /** @internal */
  acquire(ticket: RedisTicket, signal: AbortSignal | undefined): Promise<void> {
    if (ticket.state === 'released') return Promise.reject(new Error('this verification ticket was released'));
    if (ticket.state !== 'idle') return Promise.reject(new Error(`this verification ticket is already ${ticket.state}`));
    if (signal?.aborted) {
      ticket.release();
      return Promise.reject(new CancelledError());
    }
    if (ticket.lost) return Promise.reject(placeLost());
    return new Promise<void>((resolve, reject) => {
      ticket.state = 'waiting';
      ticket.wake = { resolve, reject };
      if (signal) {
        // Waiting: the ticket leaves the line and never starts. Running: the slot is given back at once (the runner kills the sandbox on the same signal).
        const onAbort = () => ticket.release();
        signal.addEventListener('abort', onAbort, { once: true });
        ticket.unlisten = () => signal.removeEventListener('abort', onAbort);
      }
      this.live.add(ticket);
      if (ticket.local) return this.line(ticket);
      const sent = performance.now();
      // A background ticket's lease is made by the enqueue, sent now.
      if (!ticket.leased) ticket.confirmedAt = sent;
      ticket.leased = true;
      this.send(ticket, () => this.redis.codeloomVerifyEnqueue(5, ...this.args(ticket.org), ticket.id, ticket.counted ? '1' : '0')).then((ok) => {
        if (Number(ok) !== 1) return this.lose(ticket);
        ticket.confirmedAt = Math.max(ticket.confirmedAt, sent);
        this.renewals();
        // Released meanwhile: its release follows on the ticket's chain.
        if (ticket.state === 'waiting') this.line(ticket);
      }, (error: unknown) => this.fail(ticket, asUnavailable(error)));
    });
  }

  /** @internal */
  finish(ticket: RedisTicket): void {
    if (ticket.state !== 'running') return;
    this.stop(ticket);
    ticket.state = 'idle';
    if (!ticket.local) this.forget(this.send(ticket, () => this.redis.codeloomVerifyLeave(5, ...this.args(ticket.org), ticket.id)));
    this.pump();
  }

  /** @internal */
  release(ticket: RedisTicket): void {
    if (ticket.state === 'released') return;
    const before = ticket.state;
    if (before === 'running') this.stop(ticket);
    if (before === 'waiting') this.unwait(ticket, new CancelledError());
    ticket.state = 'released';
    this.live.delete(ticket);
    if (ticket.leased) this.forget(this.send(ticket, () => this.redis.codeloomVerifyRelease(5, ...this.args(ticket.org), ticket.id)));
    this.pump();
  }

  private ticket(org: string | undefined, counted: boolean): RedisTicket {
    const seq = ++this.seq;
    const id = `${this.instance}:${seq}`;
    return new RedisTicket(this, id, org ?? `\0internal:${id}`, seq, counted, org === undefined);
  }

  /** A script's keys and its first three arguments for an organization. */
  private args(org: string): string[] {
    const base = `${this.prefix}verify:{${org}}:`;
    return [`${base}lease`, `${base}places`, `${base}queue`, `${base}running`, `${base}stats`, this.channel, org, String(this.leaseMs)];
  }

  /** Runs a Redis operation of `ticket` after its earlier ones. */
  private send<T>(ticket: RedisTicket, work: () => Promise<T>): Promise<T> {
    const p = ticket.chain.then(work);
    ticket.chain = p.catch(() => undefined);
    return this.track(p);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    const drop = () => { this.pending.delete(p); };
    p.then(drop, drop);
    return p;
  }

  /** An operation nobody waits for: a failure is reported, and the leases put Redis right. */
  private forget(p: Promise<unknown>): void {
    p.catch((error: unknown) => this.onError(error));
  }

  /** In the line (Redis has it queued): offered this instance's free slots from now on. */
  private line(ticket: RedisTicket): void {
    this.waiting.add(ticket);
    if (!ticket.local && !this.closed) {
      this.subscribe();
      this.pollTimer ??= setInterval(() => {
        if (this.waiting.size) return this.pump();
        clearInterval(this.pollTimer);
        this.pollTimer = undefined;
      }, this.pollMs).unref();
    }
    this.pump();
  }

  /** Out of the local line, its acquire rejected with `error`. */
  private unwait(ticket: RedisTicket, error: Error): void {
    this.waiting.delete(ticket);
    ticket.unlisten?.();
    ticket.unlisten = undefined;
    const wake = ticket.wake;
    ticket.wake = undefined;
    wake?.reject(error);
  }

  /** A waiter that cannot go on (Redis unreachable, its place lost): back to idle, its acquire rejected, out of Redis's line. */
  private fail(ticket: RedisTicket, error: Error): void {
    if (ticket.state !== 'waiting') return;
    this.unwait(ticket, error);
    ticket.state = 'idle';
    if (ticket.leased && !ticket.lost) this.forget(this.send(ticket, () => this.redis.codeloomVerifyLeave(5, ...this.args(ticket.org), ticket.id)));
  }

  /** Redis no longer holds the ticket, or it could not be renewed in time: a waiter fails, a running verification is stopped. */
  private lose(ticket: RedisTicket): void {
    if (ticket.state === 'released' || ticket.lost) return;
    ticket.lost = true;
    const error = placeLost();
    if (ticket.state === 'waiting') this.fail(ticket, error);
    // The slot stays taken here until the sandbox is down and the owner finishes or releases the ticket.
    if (ticket.state === 'running') ticket.revoker.abort(error);
  }

  private subscribe(): void {
    if (this.subscriber || this.closed) return;
    const subscriber = this.redis.duplicate();
    subscriber.on('error', () => { /* reconnects and resubscribes by itself; waiters poll meanwhile */ });
    subscriber.on('message', (_channel: string, org: string) => {
      for (const t of this.waiting) if (t.org === org) return this.pump();
    });
    // A slot that freed before the subscription (or a resubscription after a reconnect) answered sent its message to nobody: look again then.
    subscriber.on('ready', () => this.pump());
    this.forget(this.track(subscriber.subscribe(this.channel).then(() => this.pump())));
    this.subscriber = subscriber;
  }

  /** Offers free slots of this instance to its waiters, one pass at a time. */
  private pump(): void {
    if (this.closed) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    this.forget(this.track(this.drain().finally(() => {
      this.pumping = false;
      if (this.pumpAgain) this.pump();
    })));
  }

  /**
   * Organizations in the order of their oldest local waiter; for each, as many of its oldest local waiters
   * as there are free local slots are offered to Redis, which starts those among the organization's oldest
   * waiters cluster-wide while it has a slot. An organization at its cap holds back no other.
   */
  private async drain(): Promise<void> {
    do {
      this.pumpAgain = false;
      const byOrg = new Map<string, RedisTicket[]>();
      for (const t of [...this.waiting].sort((a, b) => a.seq - b.seq)) {
        const list = byOrg.get(t.org);
        if (list) list.push(t);
        else byOrg.set(t.org, [t]);
      }
      for (const [org, list] of byOrg) {
        // Only drain starts tickets, so the free count can only grow while a script runs.
        const free = this.limits.concurrency - this.running;
        if (free <= 0) return;
        const offered = list.slice(0, free);
        if (offered[0]!.local) {
          for (const t of offered) this.start(t);
          continue;
        }
        const sent = performance.now();
        let started: string[];
        try {
          started = await this.redis.codeloomVerifyStart(5, ...this.args(org), this.limits.perAccount, ...offered.map((t) => t.id)) as string[];
        } catch (error) {
          const down = asUnavailable(error);
          for (const t of list) this.fail(t, down);
          continue;
        }
        for (const id of started) {
          const t = offered.find((x) => x.id === id)!;
          t.confirmedAt = Math.max(t.confirmedAt, sent);
          if (t.state === 'waiting') this.start(t);
          // Released meanwhile: its release, sent after this start, frees the slot. Failed meanwhile: give the slot back.
          else if (t.state === 'idle') this.forget(this.send(t, () => this.redis.codeloomVerifyLeave(5, ...this.args(t.org), t.id)));
        }
      }
    } while (this.pumpAgain);
  }

  private start(ticket: RedisTicket): void {
    this.waiting.delete(ticket);
    ticket.state = 'running';
    this.running++;
    const wake = ticket.wake;
    ticket.wake = undefined;
    wake?.resolve();
  }

  private stop(ticket: RedisTicket): void {
    ticket.unlisten?.();
    ticket.unlisten = undefined;
    this.running--;
  }

  private renewals(): void {
    if (this.renewTimer || this.closed) return;
    this.renewTimer = setInterval(() => {
      if (this.renewing) return;
      this.renewing = true;
      this.forget(this.track(this.renew().finally(() => { this.renewing = false; })));
    }, this.renewMs).unref();
  }

  /** Renews every lease this instance holds (one script per organization); gives up the tickets Redis lost or that went unconfirmed too long. */
  private async renew(): Promise<void> {
    const byOrg = new Map<string, RedisTicket[]>();
    for (const t of this.live) {
      if (!t.leased || t.lost) continue;
      const list = byOrg.get(t.org);
      if (list) list.push(t);
      else byOrg.set(t.org, [t]);
    }
    if (!byOrg.size) {
      clearInterval(this.renewTimer);
      this.renewTimer = undefined;
      return;
    }
    await Promise.all([...byOrg].map(async ([org, list]) => {
      const sent = performance.now();
      try {
        const what = (t: RedisTicket) => (t.state === 'running' ? 'r' : t.state === 'waiting' ? 'w' : 'i');
        const lost = new Set(await this.redis.codeloomVerifyRenew(5, ...this.args(org), ...list.flatMap((t) => [t.id, what(t)])) as string[]);
        for (const t of list) {
          if (lost.has(t.id)) this.lose(t);
          else t.confirmedAt = Math.max(t.confirmedAt, sent);
        }
      } catch (error) {
        this.onError(error);
      }
    }));
    // Redis lets a lease run out `leaseMs` after the call that last renewed it was sent, at the earliest: give it up before.
    const deadline = performance.now() - (this.leaseMs - this.renewMs);
    for (const list of byOrg.values()) for (const t of list) if (t.confirmedAt < deadline) this.lose(t);
  }
}
