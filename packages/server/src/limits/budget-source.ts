import type { WindowSpec, WindowState } from './limit-store.js';

/** A budget's current period as a window of the LimitStore, counted in integer micro-dollars. */
export interface BudgetWindow extends WindowSpec {
  budgetId: string;
  /** Whose budget it is, in a refusal's words: "the organization's", "your member", "this API key's". */
  scopeWords: string;
  period: 'day' | 'month' | 'total';
}

/** Who makes a call, as far as budgets care (a SpendSubject fits): the organization, the member, the API key. */
export interface BudgetSubject {
  user: { id: string };
  org: { id?: string };
  apiKeyId?: string | undefined;
}

/**
 * The dollar budgets a model call is reserved against with its tokens (TokenSpend), and told of what
 * happened to them. Implemented by modules/budgets (budget-book.ts).
 */
export interface BudgetSource {
  /** The windows of the budgets that apply to `subject`, their counters present in the store (seeded from usage after a restart). */
  windowsFor(subject: BudgetSubject): Promise<BudgetWindow[]>;
  /** A reservation settled: each budget window's state after it (threshold alerts). Never throws. */
  settled(windows: readonly BudgetWindow[], states: readonly WindowState[]): void;
  /** A call was refused by this budget (the `budget.exceeded` alert). Never throws. */
  refused(window: BudgetWindow, state: WindowState): void;
}
