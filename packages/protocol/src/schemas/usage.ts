import { Type, type Static } from '@sinclair/typebox';

const DAY_OR_TIME = '^\\d{4}-\\d{2}-\\d{2}(T.*)?$';

export const UsageQuerySchema = Type.Object({
  from: Type.Optional(Type.String({ pattern: DAY_OR_TIME, description: 'First UTC day counted (YYYY-MM-DD, or an RFC 3339 time: its day). Default: 29 days before `to`.' })),
  to: Type.Optional(Type.String({ pattern: DAY_OR_TIME, description: 'Last UTC day counted, inclusive. Default: today.' })),
  group_by: Type.Optional(Type.Union([Type.Literal('day'), Type.Literal('model'), Type.Literal('api_key')], { default: 'day' })),
}, { additionalProperties: false });
export type UsageQuery = Static<typeof UsageQuerySchema>;

const Counts = {
  requests: Type.Integer({ description: 'Model calls, failed and cancelled ones included.' }),
  failed_requests: Type.Integer({ description: 'Calls that failed or were cancelled (their tokens are still counted).' }),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
  cost_usd: Type.Number({ description: 'USD, exact to the micro-dollar: the sum of each call\'s cost (rounded half up to the micro-dollar per call); 0 for models without a price and for calls recorded before prices existed.' }),
};

export const UsageRowSchema = Type.Object({
  day: Type.Optional(Type.String({ description: 'With group_by=day.' })),
  model: Type.Optional(Type.String({ description: 'With group_by=model: the model that served.' })),
  api_key_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'With group_by=api_key; null for calls made with a session or OAuth token.' })),
  ...Counts,
});
export type UsageRow = Static<typeof UsageRowSchema>;

export const UsageReportSchema = Type.Object({
  from: Type.String(),
  to: Type.String(),
  group_by: Type.String(),
  data: Type.Array(UsageRowSchema),
  totals: Type.Object(Counts),
}, { $id: 'UsageReport' });
export type UsageReport = Static<typeof UsageReportSchema>;
