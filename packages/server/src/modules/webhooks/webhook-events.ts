import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '@codeloom/protocol';

/** The events an organization's webhooks can subscribe to (CONTRACT §12.2); the list lives in the protocol, with the API's schemas. */
export { WEBHOOK_EVENT_TYPES, type WebhookEventType };

/**
 * Where the rest of the server tells of something a webhook may want: budgets (a threshold crossed, a call
 * refused) and runs (finished). `emit` never throws and never waits on a delivery: it records the event for
 * every webhook of the organization subscribed to it, and deliveries go out as jobs.
 */
export interface WebhookEvents {
  /** `account` is the organization's owner account id (an organization is its account's personal one until organizations land). */
  emit(account: string, type: WebhookEventType, data: Record<string, unknown>): void;
}

/** No webhooks (tests and tools that build parts of the server without them). */
export const NO_WEBHOOKS: WebhookEvents = { emit() {} };
