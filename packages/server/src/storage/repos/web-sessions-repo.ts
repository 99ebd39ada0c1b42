import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import { nowIso } from '../ids.js';

/** Browser sessions of the sign-in and consent pages, found by the SHA-256 of the cookie value. */
export class WebSessionsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async create(tokenHash: string, userId: string, expiresAt: string): Promise<void> {
    await this.db.insertInto('web_sessions').values({ token_hash: tokenHash, user_id: userId, created_at: nowIso(), expires_at: expiresAt }).execute();
  }

  /** The user of an unexpired session, or undefined. */
  async findUserId(tokenHash: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('web_sessions').select('user_id')
      .where('token_hash', '=', tokenHash).where('expires_at', '>', nowIso()).executeTakeFirst();
    return row?.user_id;
  }

  async delete(tokenHash: string): Promise<void> {
    await this.db.deleteFrom('web_sessions').where('token_hash', '=', tokenHash).execute();
  }

  async purgeExpired(before: string): Promise<void> {
    await this.db.deleteFrom('web_sessions').where('expires_at', '<', before).execute();
  }
}
