import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../database.js';
import { nowIso } from '../ids.js';

/** What a password change or reset ended: the sessions revoked (their access tokens must be refused everywhere). */
export interface PasswordSet {
  userId: string;
  revokedSessionIds: string[];
}

/**
 * Passwords and reset tokens. Setting a password and ending the account's
 * sessions happen in one transaction, so no refresh token of an ended
 * session can be traded after the new password holds. The browser sessions
 * of the OAuth sign-in pages end too (they are sign-ins of the old password).
 */
export class PasswordsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** The argon2 hash of an account's password, or undefined when there is no such account. */
  async passwordHash(userId: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst();
    return row?.password_hash;
  }

  /** Sets the password and ends every session of the account except `keepSessionId` (the caller's own). */
  async change(userId: string, passwordHash: string, keepSessionId: string | undefined): Promise<PasswordSet> {
    return this.db.transaction().execute(async (tx) => {
      await tx.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', userId).execute();
      return { userId, revokedSessionIds: await endSessions(tx, userId, 'password_changed', keepSessionId) };
    });
  }

  /** Stores a new reset token of the account, and drops its tokens that are used or expired (so the table stays small). */
  async createReset(tokenHash: string, userId: string, expiresAt: string): Promise<void> {
    const now = nowIso();
    await this.db.transaction().execute(async (tx) => {
      await tx.deleteFrom('password_resets').where('user_id', '=', userId)
        .where((eb) => eb.or([eb('used_at', 'is not', null), eb('expires_at', '<=', now)])).execute();
      await tx.insertInto('password_resets').values({ token_hash: tokenHash, user_id: userId, created_at: now, expires_at: expiresAt, used_at: null }).execute();
    });
  }

  /** The stored hash and account of a reset token that is unused and unexpired (looked up by its hash). */
  async findLiveReset(tokenHash: string): Promise<{ tokenHash: string; userId: string } | undefined> {
    const row = await this.db.selectFrom('password_resets').select(['token_hash', 'user_id'])
      .where('token_hash', '=', tokenHash).where('used_at', 'is', null).where('expires_at', '>', nowIso()).executeTakeFirst();
    return row && { tokenHash: row.token_hash, userId: row.user_id };
  }

  /**
   * Uses the token up (with every other outstanding token of the account),
   * sets the password and ends every session, in one transaction; undefined
   * when the token was used, expired or unknown by then (a concurrent redeem lost nothing: only one wins).
   */
  async redeemReset(tokenHash: string, passwordHash: string): Promise<PasswordSet | undefined> {
    return this.db.transaction().execute(async (tx) => {
      const now = nowIso();
      const row = await tx.selectFrom('password_resets').select('user_id').where('token_hash', '=', tokenHash).executeTakeFirst();
      if (!row) return undefined;
      const spent = await tx.updateTable('password_resets').set({ used_at: now })
        .where('token_hash', '=', tokenHash).where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
      if (Number(spent.numUpdatedRows) !== 1) return undefined;
      await tx.updateTable('password_resets').set({ used_at: now }).where('user_id', '=', row.user_id).where('used_at', 'is', null).execute();
      await tx.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', row.user_id).execute();
      return { userId: row.user_id, revokedSessionIds: await endSessions(tx, row.user_id, 'password_reset', undefined) };
    });
  }
}

async function endSessions(tx: Transaction<Database>, userId: string, reason: string, keep: string | undefined): Promise<string[]> {
  let live = tx.selectFrom('sessions').select('id').where('user_id', '=', userId).where('revoked_at', 'is', null);
  if (keep) live = live.where('id', '!=', keep);
  const ids = (await live.execute()).map((r) => r.id);
  if (ids.length) await tx.updateTable('sessions').set({ revoked_at: nowIso(), revoked_reason: reason }).where('id', 'in', ids).where('revoked_at', 'is', null).execute();
  await tx.deleteFrom('web_sessions').where('user_id', '=', userId).execute();
  return ids;
}
