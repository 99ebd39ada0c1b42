import { AppError } from '../../errors.js';
import { asDependencyError } from '../../storage/dependency-errors.js';
import type { Principal } from '../../identity/principal.js';
import type { ChannelDeps } from './stream-deps.js';

/** Close reasons (with code 4401) when a connection's credential stops holding. */
export type LostReason = 'token_expired' | 'credential_revoked';

/** setTimeout's ceiling; a later expiry is re-armed when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The credential an open WebSocket connection acts with, kept live: it is
 * checked again whenever a revocation for its account is announced (on any
 * instance) and before every frame that starts work, and its expiry closes
 * the connection at that moment. `lost` closes the connection with 4401.
 */
export class LiveCredential {
  private authorization: string | undefined;
  private environment: string | undefined;
  private expiresAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private untrack: (() => void) | undefined;
  /** Set once the credential is gone: every later check refuses with it. */
  private gone: AppError | undefined;

  constructor(private readonly deps: Pick<ChannelDeps, 'credentials' | 'credentialWatch'>, private readonly lost: (error: AppError, reason: LostReason) => void) {}

  /** Starts watching the credential a connection just authenticated with. */
  hold(principal: Principal, authorization: string, environment: string | undefined): void {
    this.release();
    this.authorization = authorization;
    this.environment = environment;
    this.expiresAt = principal.expiresAt;
    this.untrack = this.deps.credentialWatch.track(principal.user.id, () => { void this.verify().catch(() => {}); });
    this.arm();
  }

  /**
   * A fresh `auth` frame on an authenticated connection: the new credential
   * must be the same account in the same environment; it replaces the old
   * one (and its expiry). The refusal, if any.
   */
  renew(current: Principal, next: Principal, authorization: string, environment: string | undefined): AppError | undefined {
    if (current.user.id !== next.user.id || current.environment !== next.environment) {
      return new AppError('conflict', 'A fresh auth frame must be for the same account and environment as the connection; open a new connection for another.');
    }
    this.hold(next, authorization, environment);
    return undefined;
  }

  /**
   * Checks the credential again, as a REST request would. Refused: the
   * connection is closed (`lost`) and the error thrown. A dependency that is
   * down throws its 503 and leaves the connection open.
   */
  async verify(): Promise<void> {
    if (this.gone) throw this.gone;
    if (!this.authorization) return;
    if (this.expiresAt !== undefined && this.expiresAt <= Date.now()) throw this.expire();
    try {
      await this.deps.credentials.resolve(this.authorization, this.environment);
    } catch (error) {
      if (error instanceof AppError) throw this.lose(error, error.code === 'token_expired' ? 'token_expired' : 'credential_revoked');
      throw asDependencyError(error) ?? error;
    }
  }

  private lose(error: AppError, reason: LostReason): AppError {
    if (this.gone) return this.gone;
    this.gone = error;
    this.release();
    this.lost(error, reason);
    return error;
  }

  private arm(): void {
    clearTimeout(this.timer);
    if (this.expiresAt === undefined) return;
    this.timer = setTimeout(() => {
      if (this.expiresAt !== undefined && this.expiresAt <= Date.now()) this.expire();
      else this.arm();
    }, Math.min(MAX_TIMER_MS, Math.max(0, this.expiresAt - Date.now() + 5)));
    this.timer.unref();
  }

  /** Expiry needs no lookup: the time alone decides, even while Redis or the database is down. */
  private expire(): AppError {
    return this.lose(new AppError('token_expired', 'The credential of this connection has expired; reconnect with a fresh one, or send a fresh auth frame before it expires.'), 'token_expired');
  }

  /** Stops watching (the connection closed, or its credential is being replaced). */
  release(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.untrack?.();
    this.untrack = undefined;
  }
}
