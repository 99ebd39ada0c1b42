import type { CompiledQuery, Kysely } from 'kysely';
import type { PlanName } from '@codeloom/protocol';
import type { Database } from '../database.js';
import { newId, nowIso } from '../ids.js';
import { translateUnique } from '../storage-errors.js';

export interface Account {
  user: { id: string; email: string; name: string; created_at: string };
  org: { id: string; name: string; plan: PlanName };
}

export interface AccountWithSecret extends Account {
  passwordHash: string;
}

export class AccountsRepo {
  /** Every authenticated request looks its account up: build that query once and rebind only the id. */
  private readonly byIdQuery: CompiledQuery;

  constructor(private readonly db: Kysely<Database>) {
    this.byIdQuery = this.selectAccount().where('users.id', '=', '').compile();
  }

  /** Creates the user and a personal organization in one transaction; UniqueViolation when the email is taken. */
  async create(input: { email: string; emailNormalized: string; name: string; passwordHash: string; plan: PlanName }): Promise<Account> {
    const created_at = nowIso();
    const org = { id: newId('org'), name: `${input.name}'s organization`, plan: input.plan, created_at };
    const user = { id: newId('usr'), email: input.email, email_normalized: input.emailNormalized, name: input.name, password_hash: input.passwordHash, org_id: org.id, created_at };
    await translateUnique(() => this.db.transaction().execute(async (tx) => {
      // The first account of an empty database administers the instance (CONTRACT §12.4).
      const someone = await tx.selectFrom('users').select('id').limit(1).executeTakeFirst();
      await tx.insertInto('organizations').values(org).execute();
      await tx.insertInto('users').values({ ...user, is_admin: someone ? 0 : 1 }).execute();
    }));
    return { user: { id: user.id, email: user.email, name: user.name, created_at }, org: { id: org.id, name: org.name, plan: input.plan } };
  }

  private selectAccount() {
    return this.db.selectFrom('users').innerJoin('organizations as o', 'o.id', 'users.org_id').select([
      'users.id as user_id', 'users.email', 'users.name', 'users.created_at', 'users.password_hash',
      'o.id as org_id', 'o.name as org_name', 'o.plan',
    ]);
  }

  private static toAccount(row: { user_id: string; email: string; name: string; created_at: string; password_hash: string; org_id: string; org_name: string; plan: string }): AccountWithSecret {
    return {
      user: { id: row.user_id, email: row.email, name: row.name, created_at: row.created_at },
      org: { id: row.org_id, name: row.org_name, plan: row.plan as PlanName },
      passwordHash: row.password_hash,
    };
  }

  async findByEmail(emailNormalized: string): Promise<AccountWithSecret | undefined> {
    const row = await this.selectAccount().where('users.email_normalized', '=', emailNormalized).executeTakeFirst();
    return row && AccountsRepo.toAccount(row);
  }

  async findById(userId: string): Promise<Account | undefined> {
    const { rows } = await this.db.executeQuery<Parameters<typeof AccountsRepo.toAccount>[0]>({ ...this.byIdQuery, parameters: [userId] });
    const row = rows[0];
    if (!row) return undefined;
    const { passwordHash: _secret, ...account } = AccountsRepo.toAccount(row);
    return account;
  }

  /** Returns false when no user has that email. */
  async setPlanByEmail(emailNormalized: string, plan: PlanName): Promise<boolean> {
    const user = await this.db.selectFrom('users').select('org_id').where('email_normalized', '=', emailNormalized).executeTakeFirst();
    if (!user) return false;
    await this.db.updateTable('organizations').set({ plan }).where('id', '=', user.org_id).execute();
    return true;
  }

  /** Whether the account is an instance administrator (users.is_admin). */
  async isAdmin(userId: string): Promise<boolean> {
    const row = await this.db.selectFrom('users').select('is_admin').where('id', '=', userId).executeTakeFirst();
    return Number(row?.is_admin ?? 0) === 1;
  }

  /** Grants or revokes administration; false when no user has that email. */
  async setAdminByEmail(emailNormalized: string, admin: boolean): Promise<boolean> {
    const result = await this.db.updateTable('users').set({ is_admin: admin ? 1 : 0 }).where('email_normalized', '=', emailNormalized).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async list(page: number, limit: number): Promise<{ rows: Account[]; total: number }> {
    const [rows, count] = await Promise.all([
      this.selectAccount().orderBy('users.created_at', 'asc').orderBy('users.id').limit(limit).offset((page - 1) * limit).execute(),
      this.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows.map((r) => { const { passwordHash: _s, ...a } = AccountsRepo.toAccount(r); return a; }), total: Number(count.n) };
  }
}
