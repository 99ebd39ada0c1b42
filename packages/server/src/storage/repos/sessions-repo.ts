import type { Kysely } from 'kysely';
import type { Environment } from '@codeloom/protocol';
import type { Database } from '../database.js';
import { newId, nowIso } from '../ids.js';

export type RotateResult =
  | { status: 'rotated'; sessionId: string; userId: string; environment: Environment }
  | { status: 'reused'; sessionId: string; userId: string }
  | { status: 'invalid' };

export class SessionsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async create(input: { userId: string; environment: Environment; refreshHash: string; refreshExpiresAt: string }): Promise<{ id: string }> {
    const now = nowIso();
    const id = newId('ses');
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto('sessions').values({ id, user_id: input.userId, environment: input.environment, created_at: now, expires_at: input.refreshExpiresAt, revoked_at: null, revoked_reason: null }).execute();
      await tx.insertInto('refresh_tokens').values({ token_hash: input.refreshHash, session_id: id, created_at: now, expires_at: input.refreshExpiresAt, used_at: null }).execute();
    });
    return { id };
  }

  /**
   * Spends a refresh token and issues its successor. A token that was
   * already spent means it was copied: the whole session is revoked.
   */
  async rotate(oldHash: string, newHash: string, newExpiresAt: string): Promise<RotateResult> {
    return this.db.transaction().execute(async (tx): Promise<RotateResult> => {
      const now = nowIso();
      const row = await tx.selectFrom('refresh_tokens as r').innerJoin('sessions as s', 's.id', 'r.session_id')
        .select(['r.session_id', 'r.expires_at', 'r.used_at', 's.user_id', 's.revoked_at', 's.environment'])
        .where('r.token_hash', '=', oldHash).executeTakeFirst();
      if (!row || row.revoked_at) return { status: 'invalid' };
      const spent = await tx.updateTable('refresh_tokens').set({ used_at: now })
        .where('token_hash', '=', oldHash).where('used_at', 'is', null).executeTakeFirst();
      if (Number(spent.numUpdatedRows) === 0) {
        await tx.updateTable('sessions').set({ revoked_at: now, revoked_reason: 'refresh_reuse' }).where('id', '=', row.session_id).where('revoked_at', 'is', null).execute();
        return { status: 'reused', sessionId: row.session_id, userId: row.user_id };
      }
      if (row.expires_at <= now) return { status: 'invalid' };
      await tx.insertInto('refresh_tokens').values({ token_hash: newHash, session_id: row.session_id, created_at: now, expires_at: newExpiresAt, used_at: null }).execute();
      await tx.updateTable('sessions').set({ expires_at: newExpiresAt }).where('id', '=', row.session_id).execute();
      return { status: 'rotated', sessionId: row.session_id, userId: row.user_id, environment: row.environment as Environment };
    });
  }

  async revoke(sessionId: string, reason: string): Promise<void> {
    await this.db.updateTable('sessions').set({ revoked_at: nowIso(), revoked_reason: reason }).where('id', '=', sessionId).where('revoked_at', 'is', null).execute();
  }

  async isRevoked(sessionId: string): Promise<boolean> {
    const row = await this.db.selectFrom('sessions').select('revoked_at').where('id', '=', sessionId).executeTakeFirst();
    return !row || row.revoked_at !== null;
  }

  /** Sessions revoked at or after `since`: what a fresh instance must know to refuse still-unexpired access tokens. */
  async revokedSince(since: string): Promise<string[]> {
    const rows = await this.db.selectFrom('sessions').select('id').where('revoked_at', '>=', since).execute();
    return rows.map((r) => r.id);
  }
}
