import type { Kysely } from 'kysely';
import type { OAuthClientType, Permission } from '@codeloom/protocol';
import type { Database, OAuthClientsTable } from '../database.js';
import { newId, nowIso } from '../ids.js';

export interface OAuthClientRecord {
  id: string; userId: string; name: string; type: OAuthClientType; secretHash: string | null;
  redirectUris: string[]; scopes: Permission[]; created_at: string;
}

const toRecord = (r: OAuthClientsTable): OAuthClientRecord => ({
  id: r.id, userId: r.user_id, name: r.name, type: r.type as OAuthClientType, secretHash: r.secret_hash,
  redirectUris: JSON.parse(r.redirect_uris) as string[], scopes: JSON.parse(r.scopes) as Permission[], created_at: r.created_at,
});

export class OAuthClientsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async create(input: { userId: string; name: string; type: OAuthClientType; secretHash: string | null; redirectUris: string[]; scopes: Permission[] }): Promise<OAuthClientRecord> {
    const row: OAuthClientsTable = {
      id: newId('cli'), user_id: input.userId, name: input.name, type: input.type, secret_hash: input.secretHash,
      redirect_uris: JSON.stringify(input.redirectUris), scopes: JSON.stringify(input.scopes), created_at: nowIso(),
    };
    await this.db.insertInto('oauth_clients').values(row).execute();
    return toRecord(row);
  }

  async findById(id: string): Promise<OAuthClientRecord | undefined> {
    const row = await this.db.selectFrom('oauth_clients').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  /** One owner's clients, newest first. */
  async list(userId: string, page: number, limit: number): Promise<{ rows: OAuthClientRecord[]; total: number }> {
    const base = this.db.selectFrom('oauth_clients').where('user_id', '=', userId);
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset((page - 1) * limit).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows.map(toRecord), total: Number(count.n) };
  }

  /** Changes an owner's client's name and/or redirect URIs; undefined when the owner has no such client. */
  async update(userId: string, id: string, patch: { name?: string; redirectUris?: string[] }): Promise<OAuthClientRecord | undefined> {
    const set: Partial<OAuthClientsTable> = {};
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.redirectUris !== undefined) set.redirect_uris = JSON.stringify(patch.redirectUris);
    const res = await this.db.updateTable('oauth_clients').set(set).where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0 ? this.findById(id) : undefined;
  }

  /** Deletes an owner's client and, by cascade, its codes, grants and tokens; false when the owner has no such client. */
  async delete(userId: string, id: string): Promise<boolean> {
    const res = await this.db.deleteFrom('oauth_clients').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}
