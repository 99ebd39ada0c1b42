import type { Kysely } from 'kysely';
import type { Database, SigningKeysTable } from '../database.js';

export class SigningKeysRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** Oldest first, so every instance picks the same signer. */
  async list(): Promise<SigningKeysTable[]> {
    return this.db.selectFrom('signing_keys').selectAll().orderBy('created_at', 'asc').orderBy('kid', 'asc').execute();
  }

  async insert(row: SigningKeysTable): Promise<void> {
    await this.db.insertInto('signing_keys').values(row).onConflict((oc) => oc.column('kid').doNothing()).execute();
  }
}
