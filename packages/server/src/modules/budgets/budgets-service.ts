import { DEFAULT_ALERT_THRESHOLDS, MAX_BUDGETS, type Budget, type BudgetList, type CreateBudgetBody, type UpdateBudgetBody } from '@codeloom/protocol';
import { AppError } from '../../errors.js';
import type { Principal } from '../../identity/principal.js';
import { newId, nowIso } from '../../storage/ids.js';
import type { BudgetRecord } from '../../storage/repos/budgets-repo.js';
import type { Store } from '../../storage/store.js';
import type { BudgetBook } from './budget-book.js';
import { toBudget } from './budget-windows.js';

const MICROS = 1_000_000;

/** US dollars as integer micro-dollars; more than six decimals is a 400 naming the field. */
function toMicros(usd: number, field: string): number {
  const micros = Math.round(usd * MICROS);
  if (Math.abs(micros - usd * MICROS) > 1e-6 * Math.max(1, usd)) {
    throw new AppError('validation_failed', `${field} has more than six decimals (budgets are kept in whole micro-dollars).`, { errors: [{ path: `body/${field}`, message: 'must have at most six decimals' }] });
  }
  return micros;
}

const notFound = () => new AppError('not_found', 'No such budget.');

/**
 * /api/v1/budgets: an organization's budgets in US dollars (CONTRACT §12.2), managed by its owner (until
 * organizations with members land, the organization is the account's personal one). Every query is scoped
 * by organization: another organization's budget is a 404.
 */
export class BudgetsService {
  constructor(private readonly store: Store, private readonly book: BudgetBook) {}

  async create(principal: Principal, body: CreateBudgetBody): Promise<Budget> {
    await this.checkScope(principal, body.scope);
    const amountMicros = toMicros(body.amount_usd, 'amount_usd');
    if ((await this.store.budgets.countByOrg(principal.org.id)) >= MAX_BUDGETS) {
      throw new AppError('conflict', `An organization has at most ${MAX_BUDGETS} budgets; delete one first.`);
    }
    const now = nowIso();
    const record: BudgetRecord = {
      id: newId('bud'), orgId: principal.org.id, userId: principal.user.id, scope: { type: body.scope.type, id: body.scope.id },
      amountMicros, period: body.period, alertThresholds: sortedThresholds(body.alert_thresholds ?? [...DEFAULT_ALERT_THRESHOLDS]),
      createdAt: now, updatedAt: now,
    };
    await this.store.budgets.insert(record);
    this.book.forget(principal.org.id);
    return this.view(record);
  }

  async list(principal: Principal): Promise<BudgetList> {
    const list = await this.store.budgets.listByOrg(principal.org.id);
    const states = await this.book.states(list);
    return { data: list.map((b, i) => toBudget(b, states[i]!)) };
  }

  async get(principal: Principal, id: string): Promise<Budget> {
    const record = await this.store.budgets.get(principal.org.id, id);
    if (!record) throw notFound();
    return this.view(record);
  }

  async update(principal: Principal, id: string, body: UpdateBudgetBody): Promise<Budget> {
    const record = await this.store.budgets.get(principal.org.id, id);
    if (!record) throw notFound();
    const next: BudgetRecord = {
      ...record,
      ...(body.amount_usd !== undefined ? { amountMicros: toMicros(body.amount_usd, 'amount_usd') } : {}),
      ...(body.period !== undefined ? { period: body.period } : {}),
      ...(body.alert_thresholds !== undefined ? { alertThresholds: sortedThresholds(body.alert_thresholds) } : {}),
      updatedAt: nowIso(),
    };
    if (!(await this.store.budgets.update(next))) throw notFound();
    this.book.forget(principal.org.id);
    return this.view(next);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    if (!(await this.store.budgets.delete(principal.org.id, id))) throw notFound();
    this.book.forget(principal.org.id);
  }

  private async view(record: BudgetRecord): Promise<Budget> {
    const [state] = await this.book.states([record]);
    return toBudget(record, state!);
  }

  /** The scope must name this organization, one of its members, or one of its API keys (anything else: 400, without saying whose it is). */
  private async checkScope(principal: Principal, scope: CreateBudgetBody['scope']): Promise<void> {
    const ok = scope.type === 'organization' ? scope.id === principal.org.id
      : scope.type === 'member' ? scope.id === principal.user.id
        : (await this.store.apiKeys.findById(scope.id))?.userId === principal.user.id;
    if (!ok) {
      const what = scope.type === 'organization' ? 'your organization\'s id' : scope.type === 'member' ? 'the user id of a member of your organization' : 'the id of one of your organization\'s API keys';
      throw new AppError('validation_failed', `scope.id must be ${what}.`, { errors: [{ path: 'body/scope/id', message: `must be ${what}` }] });
    }
  }
}

const sortedThresholds = (list: readonly number[]): number[] => [...new Set(list)].sort((a, b) => a - b);
