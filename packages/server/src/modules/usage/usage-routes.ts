import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { UsageQuerySchema, UsageReportSchema } from '@codeloom/protocol';
import { errorResponses } from '../../plugins/openapi.js';
import type { UsageService } from './usage-service.js';

export const usageRoutes = ({ usage }: { usage: UsageService }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/usage', {
    config: { auth: 'read:code' },
    schema: {
      tags: ['Usage'], security: [{ bearer: [] }], summary: 'Your model calls and tokens, per day, model or API key',
      description: 'Every model call counts (REST, SSE, WebSocket, runs, /openai/v1), failed and cancelled ones included with the tokens they used. Days are UTC; `from` and `to` are inclusive (default: the last 30 days). Scoped to your account in the environment of the request.',
      querystring: UsageQuerySchema,
      response: { 200: UsageReportSchema, ...errorResponses(400, 401, 403, 429) },
    },
  }, async (request) => usage.report(request.principal!, request.query));
};
