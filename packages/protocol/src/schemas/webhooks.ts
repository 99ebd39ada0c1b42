import { Type, type Static } from '@sinclair/typebox';
import { SingleLine, StringEnum } from './common.js';

/** The events an organization's webhooks can subscribe to (CONTRACT §12.2). */
export const WEBHOOK_EVENT_TYPES = ['budget.threshold', 'budget.exceeded', 'run.succeeded', 'run.failed', 'run.cancelled'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Longest webhook URL accepted. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;
/** Webhooks one organization may have. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 20;

export const WebhookEventTypeSchema = StringEnum(WEBHOOK_EVENT_TYPES);

export const CreateWebhookBodySchema = Type.Object({
  url: SingleLine({ minLength: 1, maxLength: MAX_WEBHOOK_URL_LENGTH, description: 'An http:// or https:// URL. Loopback, private, link-local and unique-local hosts are refused unless CODELOOM_WEBHOOK_ALLOW_PRIVATE=true.' }),
  events: Type.Array(WebhookEventTypeSchema, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true, description: 'The events to receive (at least one, each once).' }),
  description: Type.Optional(Type.String({ maxLength: 500 })),
}, { additionalProperties: false });
export type CreateWebhookBody = Static<typeof CreateWebhookBodySchema>;

export const WebhookSchema = Type.Object({
  id: Type.String({ description: 'whk_…' }),
  url: Type.String(),
  events: Type.Array(WebhookEventTypeSchema),
  description: Type.String(),
  created_at: Type.String(),
}, { $id: 'Webhook' });
export type Webhook = Static<typeof WebhookSchema>;

export const CreatedWebhookSchema = Type.Intersect([
  WebhookSchema,
  Type.Object({ secret: Type.String({ description: 'whsec_…: the HMAC-SHA256 key of the Codeloom-Signature header; shown this once.' }) }),
]);
export type CreatedWebhook = Static<typeof CreatedWebhookSchema>;

export const WebhookListSchema = Type.Object({ data: Type.Array(WebhookSchema) });
export type WebhookList = Static<typeof WebhookListSchema>;

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export const WebhookDeliverySchema = Type.Object({
  id: Type.String({ description: 'whd_…' }),
  event: WebhookEventTypeSchema,
  event_id: Type.String({ description: 'evt_…: the `id` of the body (the same for every webhook the event went to).' }),
  status: StringEnum(WEBHOOK_DELIVERY_STATUSES, { description: '`pending` (being tried, or waiting for its next attempt), `succeeded` (a 2xx answer), `failed` (no 2xx within 24 hours of the event).' }),
  attempts: Type.Integer({ description: 'Attempts made so far.' }),
  response_status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status of the last answer; null when none came.' }),
  last_error: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt failed (null after a success).' }),
  next_attempt_at: Type.Union([Type.String(), Type.Null()], { description: 'When a pending delivery is tried next.' }),
  created_at: Type.String(),
  delivered_at: Type.Union([Type.String(), Type.Null()]),
}, { $id: 'WebhookDelivery' });
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;

export const WebhookDeliveriesSchema = Type.Object({ data: Type.Array(WebhookDeliverySchema) });
export type WebhookDeliveries = Static<typeof WebhookDeliveriesSchema>;

export const WebhookDeliveriesQuerySchema = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Newest first, 1–100.' })),
}, { additionalProperties: false });
export type WebhookDeliveriesQuery = Static<typeof WebhookDeliveriesQuerySchema>;
