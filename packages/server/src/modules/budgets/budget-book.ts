import type { BudgetSource, BudgetSubject, BudgetWindow } from '../../limits/budget-source.js';
import type { LimitStore, WindowSpec, WindowState } from '../../limits/limit-store.js';
import type { BudgetRecord } from '../../storage/repos/budgets-repo.js';
import type { Store } from '../../storage/store.js';
import type { WebhookEvents } from '../webhooks/webhook-events.js';
import { budgetWindow, periodKey, periodStartDay, toBudget } from './budget-windows.js';

export interface BudgetBookOptions {
  /** How long an organization's budgets are kept before they are read again (a change made on another instance applies within it). */
  cacheMs?: number;
  /** How often a period's counter is checked again for presence in the store (a Redis that lost its data is seeded again). */
  reseedMs?: number;
  now?: () => number;
  onError?: (error: unknown) => void;
}

/**
 * The budgets model calls are reserved against (a BudgetSource for TokenSpend): each organization's
 * budgets read from the database and kept for `cacheMs`; the counter of each budget's current period
 * lives in the LimitStore (Redis across instances), and is seeded from the usage rows the first time an
 * instance meets it, so a restart loses no spend. Threshold and exceeded alerts go out once per threshold
 * per period, however many calls on however many instances cross it: the first to claim the alert in the
 * LimitStore (an all-or-nothing window of 1) sends it.
 */
export class BudgetBook implements BudgetSource {
  private readonly budgets = new Map<string, { list: BudgetRecord[]; at: number; loading?: Promise<BudgetRecord[]> }>();
  private readonly byId = new Map<string, BudgetRecord>();
  private readonly windows = new WeakMap<BudgetRecord, BudgetWindow>();
  private readonly seeded = new Map<string, { at: number; done: Promise<void>; settled: boolean }>();
  /** Alerts this instance knows are claimed already (by it or another): no store round trip for them again. */
  private readonly claimed = new Set<string>();
  private readonly cacheMs: number;
  private readonly reseedMs: number;
  private readonly now: () => number;
  private readonly onError: (error: unknown) => void;

  constructor(private readonly store: Store, private readonly limits: LimitStore, private readonly webhooks: WebhookEvents, options: BudgetBookOptions = {}) {
    this.cacheMs = options.cacheMs ?? 1_000;
    this.reseedMs = options.reseedMs ?? 300_000;
    this.now = options.now ?? Date.now;
    this.onError = options.onError ?? ((error) => process.emitWarning(`budget alert failed: ${String(error)}`));
  }

  async windowsFor(subject: BudgetSubject): Promise<BudgetWindow[]> {
    const orgId = subject.org.id;
    if (!orgId) return [];
    const list = await this.of(orgId);
    if (!list.length) return [];
    const windows: BudgetWindow[] = [];
    let pending: Array<Promise<void>> | undefined;
    for (const b of list) {
      if (b.scope.type !== 'organization' && b.scope.id !== (b.scope.type === 'member' ? subject.user.id : subject.apiKeyId)) continue;
      const w = this.windowOf(b);
      windows.push(w);
      const seeding = this.seed(b, w);
      if (seeding) (pending ??= []).push(seeding);
    }
    if (pending) await Promise.all(pending);
    return windows;
  }

  /** A budget's window, made once per version of the budget (the hot path asks for it on every call). */
  private windowOf(b: BudgetRecord): BudgetWindow {
    let w = this.windows.get(b);
    if (!w) this.windows.set(b, w = budgetWindow(b));
    return w;
  }

  /** An organization's budgets (from the cache while it is fresh). */
  async of(orgId: string): Promise<BudgetRecord[]> {
    const nowMs = this.now();
    const entry = this.budgets.get(orgId);
    if (entry && nowMs - entry.at < this.cacheMs) return entry.list;
    if (entry?.loading) return entry.loading;
    const loading = this.store.budgets.listByOrg(orgId).then((list) => {
      this.budgets.set(orgId, { list, at: this.now() });
      for (const b of list) this.byId.set(b.id, b);
      return list;
    }, (error: unknown) => {
      this.budgets.delete(orgId);
      throw error;
    });
    this.budgets.set(orgId, { list: entry?.list ?? [], at: entry?.at ?? 0, loading });
    return loading;
  }

  /** A budget changed here: read the organization's budgets again on the next call. */
  forget(orgId: string): void {
    this.budgets.delete(orgId);
  }

  /** The state of each budget's current period (seeding its counter first when this instance has not). */
  async states(list: readonly BudgetRecord[]): Promise<WindowState[]> {
    const windows = list.map((b) => this.windowOf(b));
    await Promise.all(windows.map((w, i) => this.seed(list[i]!, w)));
    return windows.length ? this.limits.peek(windows) : [];
  }

  /**
   * Makes sure the store holds the counter of the budget's current period: what the usage rows say it spent,
   * when it holds nothing. Undefined when this instance has done so lately (the hot path: nothing to wait for).
   */
  private seed(b: BudgetRecord, w: BudgetWindow): Promise<void> | undefined {
    const nowMs = this.now();
    const key = periodKey(w, nowMs);
    const known = this.seeded.get(key);
    if (known && nowMs - known.at < this.reseedMs) return known.settled ? undefined : known.done;
    const entry: { at: number; done: Promise<void>; settled: boolean } = { at: nowMs, done: Promise.resolve(), settled: false };
    entry.done = this.store.budgets.spentMicros(b.orgId, b.scope, periodStartDay(w, nowMs))
      .then((spent) => this.limits.seed(w, spent))
      .then(() => { entry.settled = true; }, (error: unknown) => {
        this.seeded.delete(key);
        throw error;
      });
    this.seeded.set(key, entry);
    return entry.done;
  }

  settled(windows: readonly BudgetWindow[], states: readonly WindowState[]): void {
    const nowMs = this.now();
    windows.forEach((w, i) => {
      const b = this.byId.get(w.budgetId);
      const s = states[i];
      if (!b || !s) return;
      for (const t of b.alertThresholds) {
        if (s.used < Math.ceil(t * w.limit)) continue;
        this.alertOnce(w, `budalert:${b.id}:${t}`, nowMs, () => this.webhooks.emit(b.userId, 'budget.threshold', { threshold: t, budget: toBudget(b, s) }));
      }
    });
  }

  refused(w: BudgetWindow, state: WindowState): void {
    const b = this.byId.get(w.budgetId);
    if (b) this.alertOnce(w, `budexc:${b.id}`, this.now(), () => this.webhooks.emit(b.userId, 'budget.exceeded', { budget: toBudget(b, state) }));
  }

  /** Sends an alert once per period across every instance: the one that takes the single unit of its window sends it. */
  private alertOnce(w: BudgetWindow, key: string, nowMs: number, send: () => void): void {
    const alert: WindowSpec = { key: `${key}:${w.period}`, limit: 1, windowSec: w.windowSec, ...(w.monthly ? { monthly: true } : {}), ...(w.total ? { total: true } : {}) };
    const id = periodKey({ ...w, ...alert }, nowMs);
    if (this.claimed.has(id)) return;
    this.claimed.add(id);
    void this.limits.consume([alert], 1).then(({ allowed }) => { if (allowed) send(); }, (error: unknown) => {
      this.claimed.delete(id);
      this.onError(error);
    });
  }
}
