import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IdParamsSchema, LogsQuerySchema, RequestLogDetailSchema, RequestLogListSchema } from '@codeloom/protocol';
import { errorResponses } from '../../plugins/openapi.js';
import type { LogsService } from './logs-service.js';

export const logsRoutes = ({ logs }: { logs: LogsService }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Logs'];
  const security = [{ bearer: [] }];
  app.get('/logs', {
    config: { auth: 'read:code' },
    schema: {
      tags, security, summary: "Your organization's model calls, newest first (the request log)",
      description: 'One record per model call on every route (REST, SSE, the WebSocket channel, run steps, /openai/v1, /anthropic/v1), failed and cancelled ones included. '
        + 'Filters: `model`, `status`, `api_key_id`, `route`, `from`, `to` (inclusive; a day means the whole UTC day). Kept CODELOOM_LOG_RETENTION_DAYS (30). '
        + 'A call is listed once it has settled and its row is committed (a moment after the answer).',
      querystring: LogsQuerySchema,
      response: { 200: RequestLogListSchema, ...errorResponses(400, 401, 403, 429) },
    },
  }, async (request) => logs.list(request.principal!, request.query));

  app.get('/logs/:id', {
    config: { auth: 'read:code' },
    schema: {
      tags, security, summary: 'One model call of the request log',
      description: 'With CODELOOM_LOG_BODIES=redacted or full, also the messages sent and the answer (`redacted`: secrets and emails masked). Another organization\'s call is 404.',
      params: IdParamsSchema,
      response: { 200: RequestLogDetailSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
  }, async (request) => logs.get(request.principal!, request.params.id));
};
