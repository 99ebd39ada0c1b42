import type { Budget } from '@codeloom/protocol';
import { TOTAL_END, windowBounds, windowKey, type WindowState } from '../../limits/limit-store.js';
import type { BudgetWindow } from '../../limits/budget-source.js';
import type { BudgetRecord } from '../../storage/repos/budgets-repo.js';
import { microsToUsd } from '../../config/model-prices.js';

const SCOPE_WORDS = { organization: "the organization's", member: "this member's", api_key: "this API key's" } as const;

/**
 * A budget's current period as a LimitStore window in micro-dollars: a UTC day (epoch-aligned days are UTC
 * days), a UTC calendar month, or one window for all time. The period is part of the key, so changing it
 * starts a new counter.
 */
export function budgetWindow(b: BudgetRecord): BudgetWindow {
  const base = { key: `bud:${b.id}:${b.period}`, limit: b.amountMicros, budgetId: b.id, scopeWords: SCOPE_WORDS[b.scope.type], period: b.period };
  if (b.period === 'day') return { ...base, windowSec: 86_400 };
  if (b.period === 'month') return { ...base, windowSec: 32 * 86_400, monthly: true };
  return { ...base, windowSec: TOTAL_END, total: true };
}

/** The first UTC day (YYYY-MM-DD) of the budget's current period; '' for `total` (all of its history). */
export function periodStartDay(w: BudgetWindow, nowMs: number): string {
  if (w.total) return '';
  return new Date(windowBounds(w, nowMs).start * 1000).toISOString().slice(0, 10);
}

/** Where the counter of the budget's current period lives (the key its alerts are deduplicated by too). */
export const periodKey = (w: BudgetWindow, nowMs: number): string => windowKey(w, nowMs);

/** A budget as the API shows it, with what its current period holds. */
export function toBudget(b: BudgetRecord, state: WindowState): Budget {
  return {
    id: b.id, scope: { ...b.scope }, amount_usd: microsToUsd(b.amountMicros), period: b.period,
    spent_usd: microsToUsd(state.used), alert_thresholds: [...b.alertThresholds],
    resets_at: b.period === 'total' ? null : new Date(state.resetAt * 1000).toISOString(),
    created_at: b.createdAt, updated_at: b.updatedAt,
  };
}
