import { randomBytes } from 'node:crypto';
import type { ChangePasswordBody, PasswordResetConfirmBody } from '@codeloom/protocol';
import { AppError, retryAfterHeader, secondsUntil } from '../../errors.js';
import type { Store } from '../../storage/store.js';
import type { PasswordSet } from '../../storage/repos/passwords-repo.js';
import type { LimitStore, WindowSpec } from '../../limits/limit-store.js';
import type { RevocationStore } from '../../limits/revocation-store.js';
import type { Principal } from '../../identity/principal.js';
import type { CredentialEvents } from '../../identity/credential-events.js';
import { hashesMatch, sha256 } from '../../identity/secrets.js';
import { PASSWORD_RESET_PREFIX } from '../../identity/token-formats.js';
import type { Mailer } from '../mail/mailer.js';
import { passwordResetMail } from '../mail/mail-templates.js';
import type { AuthService } from './auth-service.js';
import type { PasswordHasher } from './password-hasher.js';
import { emailLookupKeys, normalizeEmail } from './email-normalization.js';

export interface PasswordSettings {
  accessTokenTtl: number;
  /** Reset requests per email address, and per client address, within loginWindow (the login throttle's figures). */
  loginMaxFailures: number;
  loginMaxFailuresPerIp: number;
  loginWindow: number;
  /** Seconds a reset link stays good. */
  passwordResetTtl: number;
}

/** Where the emailed link leads: the dashboard's reset page, the token in the fragment (never sent to a server, so never in a log or a Referer). */
export const resetLink = (publicUrl: string, token: string) => `${publicUrl.replace(/\/+$/, '')}/dashboard/reset-password#token=${token}`;

/** The one answer to every reset request, known address or not (no enumeration). */
export const RESET_ACCEPTED = { accepted: true as const, detail: 'If an account uses this address, a link to reset its password is on its way. It works once and for a limited time.' };

/**
 * Passwords (CONTRACT §12.5): change (the other sessions end), and reset by
 * an emailed single-use, short-lived link whose token is stored only as its
 * SHA-256. Ending sessions goes through the machinery logout uses: the
 * sessions are revoked in the database, their ids put in the revocation
 * store every instance consults on every request, and the credential watch
 * tells every instance to recheck (and close) open sockets.
 */
export class PasswordService {
  /** Reset requests still being handled after their answer (awaited at shutdown, before storage closes). */
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly hasher: PasswordHasher,
    private readonly limits: LimitStore,
    private readonly revocations: RevocationStore,
    private readonly events: CredentialEvents,
    private readonly mailer: Mailer,
    private readonly auth: Pick<AuthService, 'authenticate'>,
    private readonly settings: PasswordSettings,
    private readonly publicUrl: string,
  ) {}

  /**
   * A signed-in person's new password. The current one is checked under the
   * login throttle (a stolen access token must not become a password
   * oracle); every other session of the account ends, the calling one stays.
   */
  async change(principal: Principal, body: ChangePasswordBody, clientIp: string): Promise<void> {
    if (principal.type !== 'session' || !principal.sessionId) throw new AppError('insufficient_scope', 'Only a session token can change the password.');
    const account = await this.auth.authenticate(principal.user.email, body.current_password, clientIp).catch((error: unknown) => {
      throw error instanceof AppError && error.code === 'invalid_credentials' ? new AppError('invalid_credentials', 'The current password is wrong.') : error;
    });
    if (account.user.id !== principal.user.id) throw new AppError('invalid_credentials');
    const passwordHash = await this.hasher.hash(body.new_password);
    await this.ended(await this.store.passwords.change(principal.user.id, passwordHash, principal.sessionId));
  }

  /**
   * Takes a reset request and answers at once, the same for every address:
   * only the throttle (per email and per client address) runs on the
   * request's path; looking the account up, storing the token and sending
   * the mail happen afterwards, so neither the answer nor its timing tells
   * whether the address has an account.
   */
  async requestReset(email: string, clientIp: string): Promise<void> {
    const normalized = normalizeEmail(email);
    const windows: WindowSpec[] = [
      { key: `pwreset:acct:${sha256(normalized)}`, limit: this.settings.loginMaxFailures, windowSec: this.settings.loginWindow },
      { key: `pwreset:ip:${clientIp}`, limit: this.settings.loginMaxFailuresPerIp, windowSec: this.settings.loginWindow },
    ];
    const slot = await this.limits.consume(windows, 1);
    if (!slot.allowed) {
      const blocked = slot.states.filter((s) => s.remaining === 0).sort((a, b) => b.resetAt - a.resetAt)[0] ?? slot.states[0]!;
      const retryAfter = secondsUntil(blocked.resetAt);
      throw new AppError('rate_limited', `Too many password reset requests; try again in ${retryAfter} seconds.`, { headers: retryAfterHeader(retryAfter) });
    }
    const work = this.sendReset(email).catch((error: unknown) => {
      this.mailer.logger.warn({ mail: 'password_reset', error: error instanceof Error ? error.message : String(error) }, 'password reset not sent');
    });
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  /** Waits for reset requests still being handled (at shutdown). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  /** Work that follows a reset request, off its path. */
  private async sendReset(email: string): Promise<void> {
    if (!this.mailer.configured) {
      this.mailer.logger.info({ mail: 'password_reset' }, 'password reset requested; no mail sent: CODELOOM_SMTP_URL is not set');
      return;
    }
    const account = await this.findByEmail(email);
    if (!account) return;
    const token = PASSWORD_RESET_PREFIX + randomBytes(32).toString('base64url');
    await this.store.passwords.createReset(sha256(token), account.user.id, new Date(Date.now() + this.settings.passwordResetTtl * 1000).toISOString());
    const link = resetLink(this.publicUrl, token);
    await this.mailer.send('password_reset', account.user.email, passwordResetMail({ name: account.user.name, link, ttlSeconds: this.settings.passwordResetTtl }), [token, link]);
  }

  /** Sets the password from an emailed token: the token is used up and every session of the account ends. */
  async confirmReset(body: PasswordResetConfirmBody): Promise<void> {
    const tokenHash = sha256(body.token);
    const live = body.token.startsWith(PASSWORD_RESET_PREFIX) ? await this.store.passwords.findLiveReset(tokenHash) : undefined;
    if (!live || !hashesMatch(live.tokenHash, tokenHash)) throw invalidResetToken();
    const passwordHash = await this.hasher.hash(body.new_password);
    const set = await this.store.passwords.redeemReset(tokenHash, passwordHash);
    if (!set) throw invalidResetToken(); // used or expired while the password was being hashed
    await this.ended(set);
  }

  /** After the commit: every ended session's access tokens are refused on every instance, and open sockets recheck. */
  private async ended(set: PasswordSet): Promise<void> {
    await Promise.all(set.revokedSessionIds.map((id) => this.revocations.revoke(id, this.settings.accessTokenTtl)));
    if (set.revokedSessionIds.length) this.events.revoked({ userId: set.userId, reason: 'session_revoked' });
  }

  private async findByEmail(email: string) {
    for (const key of emailLookupKeys(email)) {
      const account = await this.store.accounts.findByEmail(key);
      if (account) return account;
    }
    return undefined;
  }
}

function invalidResetToken() {
  return new AppError('invalid_reset_token', 'This password reset link is unknown, expired or was already used. Ask for a new one.');
}
