import type { Kysely } from 'kysely';
import type { Database, RunsTable } from '../database.js';
import type { Owner } from './projects-repo.js';

export const TERMINAL: readonly string[] = ['succeeded', 'failed', 'cancelled'];

/** Runs are rewritten whole as they progress: one row, one atomic update per step change. */
export class RunsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: RunsTable): Promise<void> {
    await this.db.insertInto('runs').values(row).execute();
  }

  /**
   * Saves a run that is still `from` (one of these statuses), in one guarded
   * UPDATE: a finished run (`succeeded | failed | cancelled`) is never written
   * again, whatever the caller holds. False when the stored run has moved on.
   */
  async saveIfStatus(row: RunsTable, from: readonly string[]): Promise<boolean> {
    const { id, user_id: _u, environment: _e, created_at: _c, api_key_id: _k, ...rest } = row;
    const open = from.filter((s) => !TERMINAL.includes(s));
    if (!open.length) return false;
    const res = await this.db.updateTable('runs').set(rest).where('id', '=', id).where('status', 'in', open).where('status', 'not in', TERMINAL).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Compare-and-set on the status and the steps read before: a write made from a stale read changes nothing (false). */
  async saveIfUnchanged(row: RunsTable, seen: Pick<RunsTable, 'status' | 'steps'>): Promise<boolean> {
    const { id, user_id: _u, environment: _e, created_at: _c, api_key_id: _k, ...rest } = row;
    if (TERMINAL.includes(seen.status)) return false;
    const res = await this.db.updateTable('runs').set(rest).where('id', '=', id).where('status', '=', seen.status)
      .where('steps', '=', seen.steps).where('status', 'not in', TERMINAL).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async get(owner: Owner, id: string): Promise<RunsTable | undefined> {
    return this.db.selectFrom('runs').selectAll().where('id', '=', id).where('user_id', '=', owner.userId).where('environment', '=', owner.environment).executeTakeFirst();
  }

  async getById(id: string): Promise<RunsTable | undefined> {
    return this.db.selectFrom('runs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async list(owner: Owner, page: number, limit: number): Promise<{ rows: RunsTable[]; total: number }> {
    const base = this.db.selectFrom('runs').where('user_id', '=', owner.userId).where('environment', '=', owner.environment);
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset((page - 1) * limit).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  async withStatus(statuses: string[]): Promise<RunsTable[]> {
    return this.db.selectFrom('runs').selectAll().where('status', 'in', statuses).orderBy('created_at', 'asc').execute();
  }
}
