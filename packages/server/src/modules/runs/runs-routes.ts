import type { FastifyPluginAsync } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IdParamsSchema, PageOf, PageQuerySchema, RunSchema } from '@codeloom/protocol';
import type { RunsService } from './runs-service.js';
import { errorResponses } from '../../plugins/openapi.js';
import { pageParams } from '../pagination.js';
import { resumePoint, sendRunEvents } from './run-events-sse.js';

export const runsRoutes = ({ runs }: { runs: RunsService }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Runs'];
  const security = [{ bearer: [] }];

  app.get('/runs', {
    config: { auth: 'read:code' },
    schema: { tags, security, summary: 'Your runs, newest first', querystring: PageQuerySchema, response: { 200: PageOf(RunSchema), ...errorResponses(400, 401, 403, 429) } },
  }, async (request) => {
    const { page, limit } = pageParams(request.query);
    return runs.list(request.principal!, page, limit);
  });

  app.get('/runs/:id', {
    config: { auth: 'read:code' },
    schema: { tags, security, summary: 'One run with its steps and result', params: IdParamsSchema, response: { 200: RunSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => runs.get(request.principal!, request.params.id));

  app.get('/runs/:id/events', {
    config: { auth: 'read:code' },
    schema: {
      tags, security, summary: 'The run\'s events as Server-Sent Events, replayed then live',
      description: 'A `text/event-stream` of the run\'s events (`run_started`, `run_waiting` while the run waits before a step (data: the run, with `waiting` set), `step_started`, `token`, `step_completed`, then `complete` or `error`), each with `id: <seq>` and the JSON frame of the WebSocket channel in `data:`. Kept events after `Last-Event-ID` (or `?after=`; all without either) come first, then live ones, each once; the stream ends after the final event, and a request after the final event (`Last-Event-ID` at or past it: an EventSource reconnecting) gets `204 No Content`, which stops an EventSource. Events are kept for at least 24 h after the run ends.',
      params: IdParamsSchema,
      querystring: Type.Object({ after: Type.Optional(Type.Integer({ minimum: 0, description: 'Send the events whose seq is greater than this.' })) }),
      headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ pattern: '^\\s*\\d{1,15}\\s*$', description: 'Resume after this seq (what an EventSource sends when it reconnects).' })) }),
      response: {
        200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
        204: { description: 'The run\'s final event was sent already: nothing more will come (an EventSource stops reconnecting).', type: 'null' },
        ...errorResponses(400, 401, 403, 404, 429),
      },
    },
  }, async (request, reply) => sendRunEvents(runs, request, reply, request.params.id, resumePoint(request.headers['last-event-id'], request.query.after)));

  app.post('/runs/:id/cancel', {
    config: { auth: 'write:code' },
    schema: { tags, security, summary: 'Cancel a queued or running run (the model call in progress is aborted)', params: IdParamsSchema, response: { 200: RunSchema, ...errorResponses(401, 403, 404, 409, 429) } },
  }, async (request) => runs.cancel(request.principal!, request.params.id));
};
