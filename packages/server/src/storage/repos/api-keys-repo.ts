import type { Kysely } from 'kysely';
import type { Environment, Permission } from '@codeloom/protocol';
import type { Database, ApiKeysTable } from '../database.js';
import { newId, nowIso } from '../ids.js';

export interface ApiKeyRecord {
  id: string; userId: string; name: string; prefix: string; scopes: Permission[]; environment: Environment;
  created_at: string; last_used_at: string | null; expires_at: string | null; revoked_at: string | null;
  /** The key's own limits (null: the plan's alone). */
  limits: ApiKeyLimits;
}

export interface ApiKeyLimits { requests_per_minute: number | null; tokens_per_minute: number | null; monthly_tokens: number | null }

const orNull = (v: number | string | null | undefined) => (v === null || v === undefined ? null : Number(v));

const toRecord = (r: ApiKeysTable): ApiKeyRecord => ({
  id: r.id, userId: r.user_id, name: r.name, prefix: r.prefix, scopes: JSON.parse(r.scopes) as Permission[],
  environment: r.environment as Environment, created_at: r.created_at, last_used_at: r.last_used_at,
  expires_at: r.expires_at, revoked_at: r.revoked_at,
  limits: { requests_per_minute: orNull(r.requests_per_minute), tokens_per_minute: orNull(r.tokens_per_minute), monthly_tokens: orNull(r.monthly_tokens) },
});

export class ApiKeysRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async create(input: { userId: string; name: string; prefix: string; keyHash: string; scopes: Permission[]; environment: Environment; expiresAt: string | null; limits?: Partial<ApiKeyLimits> }): Promise<ApiKeyRecord> {
    const row: ApiKeysTable = {
      id: newId('key'), user_id: input.userId, name: input.name, prefix: input.prefix, key_hash: input.keyHash,
      scopes: JSON.stringify(input.scopes), environment: input.environment, created_at: nowIso(),
      last_used_at: null, expires_at: input.expiresAt, revoked_at: null,
      requests_per_minute: input.limits?.requests_per_minute ?? null, tokens_per_minute: input.limits?.tokens_per_minute ?? null,
      monthly_tokens: input.limits?.monthly_tokens ?? null,
    };
    await this.db.insertInto('api_keys').values(row).execute();
    return toRecord(row);
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
    return row && toRecord(row);
  }

  /** A key by its id, revoked or not (a run started with it is charged to it: run-executor.ts). */
  async findById(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  /** Active (unrevoked) keys of one user in one environment, newest first. */
  async list(userId: string, environment: Environment, page: number, limit: number): Promise<{ rows: ApiKeyRecord[]; total: number }> {
    const base = this.db.selectFrom('api_keys').where('user_id', '=', userId).where('environment', '=', environment).where('revoked_at', 'is', null);
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset((page - 1) * limit).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows.map(toRecord), total: Number(count.n) };
  }

  /** Revokes a key of this user in this environment; false when there is no such active key (another user's key included). */
  async revoke(userId: string, environment: Environment, id: string): Promise<boolean> {
    const res = await this.db.updateTable('api_keys').set({ revoked_at: nowIso() })
      .where('id', '=', id).where('user_id', '=', userId).where('environment', '=', environment).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Whether a key is revoked (or gone): the database's word, for when the revocation store has lost its entries. */
  async isRevoked(id: string): Promise<boolean> {
    const row = await this.db.selectFrom('api_keys').select('revoked_at').where('id', '=', id).executeTakeFirst();
    return !row || row.revoked_at !== null;
  }

  /** Keys revoked at or after `since`, for reloading the revocation store. */
  async revokedSince(since: string): Promise<string[]> {
    const rows = await this.db.selectFrom('api_keys').select('id').where('revoked_at', '>=', since).execute();
    return rows.map((r) => r.id);
  }

  /** Renames a key or changes its limits (an absent field is left as it is); undefined when this user has no such active key. */
  async update(userId: string, environment: Environment, id: string, patch: { name?: string } & Partial<ApiKeyLimits>): Promise<ApiKeyRecord | undefined> {
    const set: Partial<ApiKeysTable> = {};
    if (patch.name !== undefined) set.name = patch.name;
    for (const k of ['requests_per_minute', 'tokens_per_minute', 'monthly_tokens'] as const) if (patch[k] !== undefined) set[k] = patch[k];
    const scoped = <Q extends { where: (...a: any[]) => any }>(q: Q) => q.where('id', '=', id).where('user_id', '=', userId).where('environment', '=', environment).where('revoked_at', 'is', null);
    if (Object.keys(set).length) await scoped(this.db.updateTable('api_keys').set(set)).execute();
    const row = await scoped(this.db.selectFrom('api_keys').selectAll()).executeTakeFirst();
    return row && toRecord(row);
  }

  async touch(id: string, at: string): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }
}
