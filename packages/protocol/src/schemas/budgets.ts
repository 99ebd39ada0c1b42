import { Type, type Static } from '@sinclair/typebox';
import { SingleLine, StringEnum, Timestamp } from './common.js';

export const BUDGET_SCOPE_TYPES = ['organization', 'member', 'api_key'] as const;
export const BUDGET_PERIODS = ['day', 'month', 'total'] as const;
export const DEFAULT_ALERT_THRESHOLDS = [0.5, 0.8, 1] as const;
/** Most budgets per organization. */
export const MAX_BUDGETS = 50;

const AmountUsd = Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: 'US dollars, at most six decimals (kept in integer micro-dollars).' });
const AlertThresholds = Type.Array(Type.Number({ exclusiveMinimum: 0, maximum: 1 }), {
  maxItems: 10, uniqueItems: true,
  description: 'Fractions of the amount at which a `budget.threshold` webhook event is sent, once per threshold per period (default [0.5, 0.8, 1]; [] for none).',
});
const Period = StringEnum(BUDGET_PERIODS, { description: '`day` and `month` are UTC calendar periods; `total` never resets.' });

export const BudgetScopeSchema = Type.Object({
  type: StringEnum(BUDGET_SCOPE_TYPES, { description: 'Whose spend counts: the whole organization, one member (a user id) or one API key.' }),
  id: SingleLine({ minLength: 1, maxLength: 64, description: 'The organization id, the member\'s user id, or the API key id.' }),
}, { additionalProperties: false });

export const CreateBudgetBodySchema = Type.Object({
  scope: BudgetScopeSchema,
  amount_usd: AmountUsd,
  period: Period,
  alert_thresholds: Type.Optional(AlertThresholds),
}, { additionalProperties: false });
export type CreateBudgetBody = Static<typeof CreateBudgetBodySchema>;

export const UpdateBudgetBodySchema = Type.Object({
  amount_usd: Type.Optional(AmountUsd),
  period: Type.Optional(Period),
  alert_thresholds: Type.Optional(AlertThresholds),
}, { additionalProperties: false, minProperties: 1 });
export type UpdateBudgetBody = Static<typeof UpdateBudgetBodySchema>;

export const BudgetSchema = Type.Object({
  id: Type.String(),
  scope: BudgetScopeSchema,
  amount_usd: Type.Number(),
  period: Period,
  spent_usd: Type.Number({ description: 'Charged in the current period (settled calls and calls in flight at their most cost), in US dollars.' }),
  alert_thresholds: Type.Array(Type.Number()),
  resets_at: Type.Union([Timestamp('When the current period ends (UTC).'), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { $id: 'Budget' });
export type Budget = Static<typeof BudgetSchema>;

export const BudgetListSchema = Type.Object({ data: Type.Array(BudgetSchema) });
export type BudgetList = Static<typeof BudgetListSchema>;
