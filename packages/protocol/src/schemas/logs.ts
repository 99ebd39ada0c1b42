import { Type, type Static } from '@sinclair/typebox';
import { PageOf, PageQuerySchema, SingleLine } from './common.js';

const TIME = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2}))?$';

/** GET /api/v1/logs (CONTRACT §12.7): paged, newest first; every filter optional. */
export const LogsQuerySchema = Type.Object({
  ...PageQuerySchema.properties,
  model: Type.Optional(SingleLine({ minLength: 1, maxLength: 200, description: 'The model that served (or last failed).' })),
  status: Type.Optional(Type.Union([Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('cancelled')])),
  api_key_id: Type.Optional(SingleLine({ minLength: 1, maxLength: 64 })),
  route: Type.Optional(SingleLine({ minLength: 1, maxLength: 120, description: 'The route pattern, e.g. `/api/v1/generate`, `/openai/v1/chat/completions`, `channel` (WebSocket) or `run` (run steps).' })),
  from: Type.Optional(Type.String({ pattern: TIME, description: 'Calls at or after this time (RFC 3339, or a UTC day: its start).' })),
  to: Type.Optional(Type.String({ pattern: TIME, description: 'Calls at or before this time (RFC 3339, or a UTC day: its end).' })),
}, { additionalProperties: false });
export type LogsQuery = Static<typeof LogsQuerySchema>;

const NullableString = Type.Union([Type.String(), Type.Null()]);

const RequestLogFields = {
  id: Type.String({ description: '`log_…`, time-ordered.' }),
  at: Type.String({ description: 'When the call started (RFC 3339 UTC).' }),
  organization_id: Type.String(),
  user_id: Type.String(),
  api_key_id: NullableString,
  route: Type.String(),
  model: Type.String({ description: 'The model that served (or last failed).' }),
  deployment_id: Type.Union([Type.String(), Type.Null()], { description: 'The deployment that served, when the model is served by deployments; else null.' }),
  status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('cancelled')]),
  error_code: NullableString,
  http_status: Type.Integer({ description: 'What the call answered: 200, the error\'s status, 499 when the caller went away.' }),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  cost_usd: Type.Number(),
  latency_ms: Type.Integer({ description: 'From the call\'s start (its token reservation) to its end.' }),
  ttft_ms: Type.Union([Type.Integer(), Type.Null()], { description: 'Time to the first token; null when none came.' }),
  queued_ms: Type.Integer({ description: 'From the call\'s start until the first upstream attempt (reservation, admission).' }),
  fallback_from: Type.Union([Type.String(), Type.Null()], { description: 'The model asked for, when a fallback served instead.' }),
  request_id: NullableString,
  stream: Type.Boolean(),
};

export const RequestLogSchema = Type.Object(RequestLogFields, { $id: 'RequestLog' });
export type RequestLog = Static<typeof RequestLogSchema>;

export const RequestLogDetailSchema = Type.Object({
  ...RequestLogFields,
  request_body: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'With CODELOOM_LOG_BODIES=redacted or full: the messages sent, as JSON text (`redacted`: secrets and emails masked).' })),
  response_body: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'With CODELOOM_LOG_BODIES=redacted or full: the answer text.' })),
}, { $id: 'RequestLogDetail' });
export type RequestLogDetail = Static<typeof RequestLogDetailSchema>;

export const RequestLogListSchema = PageOf(RequestLogSchema);
export type RequestLogList = Static<typeof RequestLogListSchema>;
