import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { AppError } from '../../errors.js';
import { RateLimiter } from '../../limits/rate-limiter.js';
import type { Principal } from '../../identity/principal.js';
import { problemData, toErrorData, type ErrorData } from './channel-errors.js';
import type { ConnectionRegistry, ConnectionSlot } from './connection-registry.js';
import { LiveCredential } from './live-credential.js';
import type { FrameSender } from './send-queue.js';
import type { ChannelDeps } from './stream-deps.js';

export interface ConnectionAuthOptions {
  connectionId: string;
  ws: WebSocket;
  request: FastifyRequest;
  out: FrameSender;
  registry: ConnectionRegistry;
  deps: Pick<ChannelDeps, 'credentials' | 'credentialWatch'>;
  timeoutMs: number;
  /** The credential stopped holding (revoked, expired): the connection was refused with 4401 and must let go of everything. */
  onLost: () => void;
}

/**
 * Who a connection acts for: the credential of the upgrade or of an `auth`
 * frame (else 4401 after the auth deadline), one of the account's connection
 * slots (else 4429), a fresh `auth` frame replacing the credential, and the
 * live check that closes the connection with 4401 once it no longer holds.
 *
 * The slot is claimed only by a socket still open once its credential is
 * known (one that went away during the check claims nothing and watches
 * nothing), and every claimed slot is given back exactly once on close.
 */
export class ConnectionAuth {
  private current: Principal | null = null;
  /** Revocation, logout and expiry of the credential close the connection (4401). */
  readonly live: LiveCredential;
  /** The account's connection slot this connection holds, from `connected` until it closes. */
  private slot: ConnectionSlot | undefined;
  /** Set once the connection is closing (stop): nothing is claimed or watched after it. */
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  /** Set while a credential is being checked: frames that arrive meanwhile wait for it, so `auth` then `generate` sent back to back work in order. */
  private checking: Promise<void> | undefined;

  constructor(private readonly o: ConnectionAuthOptions) {
    this.live = new LiveCredential(o.deps, (error, reason) => { this.refuse(toErrorData(error), reason); o.onLost(); });
  }

  /** The authenticated principal; null until then (and after a refusal). */
  get principal(): Principal | null { return this.current; }

  /** The credential check in progress, if any. */
  get pending(): Promise<void> | undefined { return this.checking; }

  /** The upgrade's Authorization header authenticates at once; without it an `auth` frame must come within the deadline. */
  begin(): void {
    // Resolved here again, not taken from the upgrade's auth hook: `?environment=` then counts as the header does, and a refusal is told why (invalid_token, token_expired, forbidden, …).
    if (this.o.request.headers.authorization) return void this.authenticate(this.o.request.headers.authorization);
    this.timer = setTimeout(() => this.refuse(problemData('unauthorized', `No auth frame within ${this.o.timeoutMs / 1000} s.`)), this.o.timeoutMs);
  }

  /** Resolves a credential; on failure sends the credential error (its own status and code) and closes with 4401. */
  authenticate(authorization: string, environment?: string): Promise<void> {
    clearTimeout(this.timer);
    const env = environment ?? this.requestedEnvironment();
    const pending = (async () => {
      let principal: Principal;
      try {
        principal = await this.o.deps.credentials.resolve(authorization, env);
      } catch (error) {
        // A bad re-auth frame leaves the credential the socket already holds in force.
        if (error instanceof AppError) return this.current ? this.o.out.sendNow({ event: 'error', data: toErrorData(error) }) : this.refuse(toErrorData(error));
        this.o.request.log.error({ err: error }, 'channel authentication failed');
        this.o.out.sendNow({ event: 'error', data: problemData('service_unavailable', 'The credential could not be checked; reconnect and retry.') });
        if (this.open) this.o.ws.close(1011, 'internal error');
        return;
      }
      // The socket went away (or started closing) while the credential was checked: its close has run or is
      // on its way, so a slot claimed or a credential watched now would never be given back.
      if (!this.open) return;
      if (this.current) {
        // A fresh auth frame on an open connection: same account and environment, new credential and expiry.
        const refused = this.live.renew(this.current, principal, authorization, env);
        if (refused) return this.o.out.sendNow({ event: 'error', data: toErrorData(refused) });
        this.current = principal;
        return this.o.out.sendNow({ event: 'connected', data: { connection_id: this.o.connectionId, user_id: principal.user.id } });
      }
      this.current = principal;
      this.authenticated();
      if (this.current) this.live.hold(principal, authorization, env);
    })();
    this.checking = pending.finally(() => { this.checking = undefined; });
    return this.checking;
  }

  private authenticated(): void {
    const p = this.current!;
    // One slot per connection, however it got here.
    const slot = this.slot ?? this.o.registry.claim(RateLimiter.subjectFor(p.user.id, p.environment));
    if (!slot) {
      this.current = null;
      this.o.out.sendNow({ event: 'error', data: { status: 429, code: 'rate_limited', message: `At most ${this.o.registry.maxPerAccount} open streaming connections per account; close one first.` } });
      this.o.ws.close(4429, 'too many connections');
      return;
    }
    this.slot = slot;
    this.o.out.sendNow({ event: 'connected', data: { connection_id: this.o.connectionId, user_id: p.user.id } });
  }

  private refuse(data: ErrorData, reason = 'unauthorized'): void {
    this.o.out.sendNow({ event: 'error', data });
    if (this.o.ws.readyState === this.o.ws.OPEN) this.o.ws.close(4401, reason);
  }

  /** Browsers cannot set X-Environment on an upgrade, so `?environment=sandbox` on the URL does the same. */
  private requestedEnvironment(): string | undefined {
    const header = this.o.request.headers['x-environment'];
    if (typeof header === 'string') return header;
    const query = this.o.request.query as Record<string, unknown> | undefined;
    return typeof query?.environment === 'string' ? query.environment : undefined;
  }

  /** Open and not stopped: the only state in which a slot is claimed or a credential watched. */
  private get open(): boolean {
    return !this.stopped && this.o.ws.readyState === this.o.ws.OPEN;
  }

  /** The connection is closing: no more deadline, no more watching the credential, and a check still running claims nothing. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.live.release();
  }

  /** Gives the account's connection slot back (after the connection's work was let go). */
  releaseSlot(): void {
    this.slot?.release();
    this.slot = undefined;
  }
}
