import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { CredentialEvents, CredentialRevoked } from '../../identity/credential-events.js';

type Recheck = () => void;

/** After the announcement channel reconnects, the request-path client has had time to reconnect too. */
const RECHECK_AFTER_RECONNECT_MS = 1_500;

/**
 * Which open connections hold which account's credentials, on this
 * instance, and the broadcast that reaches every instance when a credential
 * is revoked. A revocation makes each affected connection check its
 * credential again (the credential resolver decides, so the answer is the
 * same as a REST request's); a connection whose credential no longer holds
 * closes with 4401. With Redis the event travels on a pub/sub channel;
 * without it this process is the only instance.
 */
export class CredentialWatch implements CredentialEvents {
  private readonly byUser = new Map<string, Set<Recheck>>();
  private readonly origin = randomBytes(8).toString('hex');
  private readonly subscriber: Redis | undefined;

  constructor(private readonly redis?: Redis, private readonly channel = 'codeloom:credentials') {
    if (!redis) return;
    this.subscriber = redis.duplicate();
    this.subscriber.on('error', () => { /* reconnects by itself; resubscribes on reconnect */ });
    this.subscriber.on('message', (_channel: string, message: string) => {
      try {
        const { origin, ...event } = JSON.parse(message) as CredentialRevoked & { origin?: string };
        if (origin !== this.origin) this.dispatch(event);
      } catch { /* not ours */ }
    });
    void this.subscriber.subscribe(channel).catch(() => {});
    // Announcements sent while this link was down are lost, and revocations made meanwhile are only in the
    // database: once Redis is back (and the revocation store has noticed), every connection checks again.
    let down = false;
    this.subscriber.on('close', () => { down = true; });
    this.subscriber.on('ready', () => {
      if (!down) return;
      down = false;
      setTimeout(() => this.dispatch({ reason: 'session_revoked' }), RECHECK_AFTER_RECONNECT_MS).unref();
    });
  }

  /** Open connections registered on this instance (codeloom_ws_connections, read at each scrape). */
  get connections(): number {
    let n = 0;
    for (const set of this.byUser.values()) n += set.size;
    return n;
  }

  /** Registers a connection's recheck for an account; returns the unregister function. */
  track(userId: string, recheck: Recheck): () => void {
    let set = this.byUser.get(userId);
    if (!set) this.byUser.set(userId, (set = new Set()));
    set.add(recheck);
    return () => {
      set.delete(recheck);
      if (set.size === 0 && this.byUser.get(userId) === set) this.byUser.delete(userId);
    };
  }

  /** After a revocation is committed: affected connections here recheck now, other instances as the message arrives. */
  revoked(event: CredentialRevoked): void {
    this.dispatch(event);
    if (this.redis) void this.redis.publish(this.channel, JSON.stringify({ ...event, origin: this.origin })).catch(() => { /* per-frame checks still refuse it */ });
  }

  private dispatch(event: CredentialRevoked): void {
    const targets = event.userId ? [this.byUser.get(event.userId) ?? []] : this.byUser.values();
    for (const set of targets) for (const recheck of [...set]) recheck();
  }

  async close(): Promise<void> {
    this.byUser.clear();
    await this.subscriber?.quit().catch(() => this.subscriber?.disconnect());
  }
}
