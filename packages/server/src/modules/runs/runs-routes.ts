import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IdParamsSchema, PageOf, PageQuerySchema, RunSchema } from '@codeloom/protocol';
import type { AppContext } from '../../context.js';
import { errorResponses } from '../../plugins/openapi.js';
import { pageParams } from '../pagination.js';

export const runsRoutes = (ctx: AppContext): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Runs'];
  const security = [{ bearer: [] }];

  app.get('/runs', {
    config: { auth: 'read:code' },
    schema: { tags, security, summary: 'Your runs, newest first', querystring: PageQuerySchema, response: { 200: PageOf(RunSchema), ...errorResponses(400, 401, 403, 429) } },
  }, async (request) => {
    const { page, limit } = pageParams(request.query);
    return ctx.runs.list(request.principal!, page, limit);
  });

  app.get('/runs/:id', {
    config: { auth: 'read:code' },
    schema: { tags, security, summary: 'One run with its steps and result', params: IdParamsSchema, response: { 200: RunSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => ctx.runs.get(request.principal!, request.params.id));

  app.post('/runs/:id/cancel', {
    config: { auth: 'write:code' },
    schema: { tags, security, summary: 'Cancel a queued or running run (the model call in progress is aborted)', params: IdParamsSchema, response: { 200: RunSchema, ...errorResponses(401, 403, 404, 409, 429) } },
  }, async (request) => ctx.runs.cancel(request.principal!, request.params.id));
};
