import type { Kysely } from 'kysely';
import type { Database, RunsTable } from '../database.js';
import type { Owner } from './projects-repo.js';

/** Runs are rewritten whole as they progress: one row, one atomic update per step change. */
export class RunsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: RunsTable): Promise<void> {
    await this.db.insertInto('runs').values(row).execute();
  }

  async save(row: RunsTable): Promise<void> {
    const { id, user_id: _u, environment: _e, created_at: _c, ...rest } = row;
    await this.db.updateTable('runs').set(rest).where('id', '=', id).execute();
  }

  /** Saves only while the stored run still has one of these statuses (compare-and-set); false when it has moved on. */
  async saveIfStatus(row: RunsTable, statuses: string[]): Promise<boolean> {
    const { id, user_id: _u, environment: _e, created_at: _c, ...rest } = row;
    const res = await this.db.updateTable('runs').set(rest).where('id', '=', id).where('status', 'in', statuses).executeTakeFirst();
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
