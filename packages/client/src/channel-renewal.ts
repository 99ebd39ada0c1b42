import { errorFromFrame, type CodeloomError } from './errors.js';
import type { Transport } from './transport.js';

/**
 * The `auth` frame for `token`. In the sandbox it says so: a browser's (or Node 22's global) WebSocket cannot
 * send the X-Environment header. In production it names none, as HTTP requests send no header there: the
 * credential decides (a `cl_test_` key or a sandbox session stays in the sandbox, where naming production is refused).
 */
export function authFrame(transport: Transport, token: string): Record<string, string> {
  return transport.options.environment === 'sandbox' ? { type: 'auth', token, environment: 'sandbox' } : { type: 'auth', token };
}

/** Renew no later than this long before the access token expires. */
const MAX_LEAD_MS = 30_000;
/** Never renew more often than this (a token that looks expired already, e.g. under clock skew, must not cause a refresh loop). */
const MIN_DELAY_MS = 250;

/** Wait before renewing a credential that expires at `expiresAt` (ms): half of the remaining lifetime, but at most 30 s before expiry. */
export function renewalDelayMs(expiresAt: number, now = Date.now()): number {
  const remaining = expiresAt - now;
  return Math.max(MIN_DELAY_MS, remaining / 2, remaining - MAX_LEAD_MS);
}

/**
 * Keeps the credential of one open streaming connection alive: shortly
 * before the session access token it authenticated with expires, the
 * client refreshes (sharing the transport's single in-flight refresh, so a
 * rotating refresh token is presented once) and sends the new access token
 * as an `auth` frame on the open socket; the server answers `connected`.
 * API keys (no expiry) and clients without a refresh token are left alone.
 * A failed renewal is not reported: the server then closes the connection
 * at expiry with `token_expired`, as without renewal.
 */
export class ChannelRenewal {
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The token of the `auth` frame sent and not answered yet. */
  private pending: string | undefined;
  private stopped = false;
  /** The server's refusal of a renewal (or its expiry notice, when that crossed the renewal). */
  refusal: CodeloomError | undefined;

  constructor(private readonly transport: Transport, private token: string, private readonly send: (frame: Record<string, unknown>) => void) {
    this.schedule();
  }

  /** A frame from the server; true when it answered the renewal (it is then not for the channel's listener). */
  reply(frame: { event: string; id?: unknown; data?: unknown }): boolean {
    if (frame.event === 'connected') {
      // Only a renewal is answered with `connected` on an open connection.
      if (this.pending !== undefined) {
        this.token = this.pending;
        this.pending = undefined;
        this.schedule();
      }
      return true;
    }
    if (this.pending === undefined || frame.event !== 'error' || frame.id !== undefined) return false;
    // Refused (the connection keeps its old credential until that expires): no more renewals.
    this.pending = undefined;
    this.refusal = errorFromFrame(frame.data);
    this.stop();
    return true;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopped || !this.transport.canRefresh()) return;
    const expiresAt = this.transport.expiryOf(this.token);
    if (expiresAt === undefined) return;
    this.timer = setTimeout(() => { void this.renew(); }, renewalDelayMs(expiresAt));
  }

  private async renew(): Promise<void> {
    this.timer = undefined;
    try {
      await this.transport.refreshAfterExpiry(this.token); // no refresh when another call already replaced this token
    } catch {
      return; // the server's expiry closes the connection with token_expired
    }
    const fresh = this.transport.credential();
    if (this.stopped || !fresh || fresh === this.token) return;
    try {
      this.send(authFrame(this.transport, fresh));
      this.pending = fresh;
    } catch { /* the connection closed meanwhile */ }
  }
}
