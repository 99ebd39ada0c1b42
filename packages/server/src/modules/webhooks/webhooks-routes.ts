import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { CreateWebhookBodySchema, CreatedWebhookSchema, IdParamsSchema, SuccessSchema, WebhookDeliveriesQuerySchema, WebhookDeliveriesSchema, WebhookListSchema, WebhookSchema } from '@codeloom/protocol';
import { errorResponses } from '../../plugins/openapi.js';
import type { WebhooksService } from './webhooks-service.js';

const EVENTS_DOC = 'Events: `run.succeeded`, `run.failed`, `run.cancelled` (data: the run as GET /api/v1/runs/{id} returns it), `budget.threshold`, `budget.exceeded`. '
  + 'Each delivery is a POST of `{id: "evt_…", type, created_at, data}` with `Codeloom-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`; '
  + 'a non-2xx answer or none within 10 s is retried with backoff for 24 hours (docs/api.md, Webhooks).';

export const webhooksRoutes = ({ webhooks }: { webhooks: WebhooksService }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // Account management, like API keys: a signed-in session only (an API key or OAuth token cannot add a receiver of run results).
  const config = { auth: 'any', sessionOnly: true } as const;
  const tags = ['Webhooks'];
  const security = [{ bearer: [] }];

  app.post('/webhooks', {
    config,
    schema: {
      tags, security, summary: 'Add a webhook (its signing secret is shown once)',
      description: `${EVENTS_DOC} At most 20 webhooks per organization (409 beyond). A URL naming a loopback, private, link-local or unique-local host is refused (400) unless the server runs with CODELOOM_WEBHOOK_ALLOW_PRIVATE=true.`,
      body: CreateWebhookBodySchema, response: { 201: CreatedWebhookSchema, ...errorResponses(400, 401, 403, 409, 429) },
    },
  }, async (request, reply) => reply.code(201).send(await webhooks.create(request.principal!, request.body)));

  app.get('/webhooks', {
    config,
    schema: { tags, security, summary: "Your organization's webhooks (never their secrets)", response: { 200: WebhookListSchema, ...errorResponses(401, 403, 429) } },
  }, async (request) => webhooks.list(request.principal!));

  app.get('/webhooks/:id', {
    config,
    schema: { tags, security, summary: 'One webhook (never its secret)', params: IdParamsSchema, response: { 200: WebhookSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => webhooks.get(request.principal!, request.params.id));

  app.delete('/webhooks/:id', {
    config,
    schema: { tags, security, summary: 'Delete a webhook and its delivery log (nothing more is sent to it)', params: IdParamsSchema, response: { 200: SuccessSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => {
    await webhooks.delete(request.principal!, request.params.id);
    return { success: true };
  });

  app.get('/webhooks/:id/deliveries', {
    config,
    schema: {
      tags, security, summary: "A webhook's latest deliveries, newest first",
      description: 'Each event sent to the webhook: its status (`pending`, `succeeded`, `failed`), attempts so far, the HTTP status of the last answer and why the last attempt failed.',
      params: IdParamsSchema, querystring: WebhookDeliveriesQuerySchema, response: { 200: WebhookDeliveriesSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
  }, async (request) => webhooks.deliveries(request.principal!, request.params.id, request.query.limit ?? 20));
};
