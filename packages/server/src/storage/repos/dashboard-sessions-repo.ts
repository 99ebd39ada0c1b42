import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import { nowIso } from '../ids.js';

/**
 * The dashboard's look-up of its cookie: the session whose refresh token has
 * this hash, when the token is unspent and unexpired and the session is not
 * revoked. Read-only: unlike SessionsRepo.rotate it spends nothing.
 */
export async function findLiveSessionByRefreshHash(db: Kysely<Database>, refreshHash: string): Promise<{ sessionId: string; userId: string } | undefined> {
  const row = await db.selectFrom('refresh_tokens as r').innerJoin('sessions as s', 's.id', 'r.session_id')
    .select(['r.session_id', 's.user_id'])
    .where('r.token_hash', '=', refreshHash).where('r.used_at', 'is', null).where('s.revoked_at', 'is', null).where('r.expires_at', '>', nowIso())
    .executeTakeFirst();
  return row && { sessionId: row.session_id, userId: row.user_id };
}
