import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import { nowIso } from '../ids.js';
import type { Owner } from './projects-repo.js';

export interface OwnedDocument<T> { id: string; name: string; data: T; created_at: string }

/** Agents and workflows: a named JSON document per row, always read through its owner and environment. */
export class OwnedDocumentsRepo<T> {
  constructor(private readonly db: Kysely<Database>, private readonly table: 'agents' | 'workflows') {}

  private owned(owner: Owner) {
    return this.db.selectFrom(this.table).where('user_id', '=', owner.userId).where('environment', '=', owner.environment);
  }

  async create(owner: Owner, id: string, name: string, data: T): Promise<OwnedDocument<T>> {
    const created_at = nowIso();
    await this.db.insertInto(this.table).values({ id, user_id: owner.userId, environment: owner.environment, name, data: JSON.stringify(data), created_at }).execute();
    return { id, name, data, created_at };
  }

  async get(owner: Owner, id: string): Promise<OwnedDocument<T> | undefined> {
    const row = await this.owned(owner).selectAll().where('id', '=', id).executeTakeFirst();
    return row && { id: row.id, name: row.name, data: JSON.parse(row.data) as T, created_at: row.created_at };
  }

  async list(owner: Owner, page: number, limit: number): Promise<{ rows: OwnedDocument<T>[]; total: number }> {
    const [rows, count] = await Promise.all([
      this.owned(owner).selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset((page - 1) * limit).execute(),
      this.owned(owner).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows.map((r) => ({ id: r.id, name: r.name, data: JSON.parse(r.data) as T, created_at: r.created_at })), total: Number(count.n) };
  }

  async delete(owner: Owner, id: string): Promise<boolean> {
    const res = await this.db.deleteFrom(this.table).where('id', '=', id).where('user_id', '=', owner.userId).where('environment', '=', owner.environment).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}
