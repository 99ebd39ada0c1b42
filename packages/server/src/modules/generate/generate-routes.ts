import type { Socket } from 'node:net';
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { GenerateBodySchema, GenerationResultSchema, IdParamsSchema, LanguageInfoSchema, ModelInfoSchema, PageOf, PageQuerySchema } from '@codeloom/protocol';
import type { ModelRegistry } from '../../providers/model-registry.js';
import { errorResponses, modelCallErrorResponses } from '../../plugins/openapi.js';
import { pageParams } from '../pagination.js';
import { AppError, CancelledError } from '../../errors.js';
import { serverTiming, type GenerationService } from './generation-service.js';
import { sendAsSse } from './sse-stream.js';
import { callOrigin } from '../../plugins/tracing.js';

const tags = ['Generation'];

/**
 * One abort per connection, fired when it closes: an HTTP/1.1 connection carries its requests one after
 * another, so what it aborts is the generation in flight on it (all of them, if a client pipelined). Made
 * once per connection rather than once per request: an AbortController is an EventTarget, about 5 µs to
 * make, listen to and drop on every generation.
 */
const connectionAborts = new WeakMap<Socket, AbortSignal>();
function abortedWhenClosed(socket: Socket): AbortSignal {
  let signal = connectionAborts.get(socket);
  if (!signal) {
    if (socket.destroyed) return AbortSignal.abort();
    const abort = new AbortController();
    socket.once('close', () => abort.abort());
    signal = abort.signal;
    connectionAborts.set(socket, signal);
  }
  return signal;
}
const security = [{ bearer: [] }];

export const generateRoutes = ({ generation, models }: { generation: GenerationService; models: ModelRegistry }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/generate', {
    config: { auth: 'write:code' },
    schema: {
      tags, security, summary: 'Generate code from a prompt',
      description: 'With `"stream": true` the answer is `text/event-stream`: `token` events, then `complete` (the result) or `error`. Each event\'s `data` is the JSON frame of the WebSocket channel. With `verify`, the files are built and tested in an isolated sandbox (`verify_started`, `verify_output`, `verify_completed` events when streaming) and the result carries `verification`; see docs/verification.md. Tokens: the call holds an upper bound of what it may use (its prompt\'s bytes plus `max_tokens`) from the token windows until it ends, then is charged what it used; an answer that would go past `max_tokens` is cut (`finish_reason: "length"`). A call that can never fit a token limit is a 400 `request_too_large`; one that does not fit now, a 429 `rate_limited` with Retry-After.',
      body: GenerateBodySchema,
      response: { 200: GenerationResultSchema, ...modelCallErrorResponses(400, 401, 403, 404, 413, 415, 429, 502, 503, 504) },
    },
  }, async (request, reply) => {
    const principal = request.principal!;
    const prepared = await generation.prepare(principal, request.body, callOrigin(request));
    if (request.body.stream) {
      // run settles the reservation and frees the verification place; release only matters if the stream failed before run started.
      try {
        const timing = { upstreamMs: 0, totalMs: 0 };
        return await sendAsSse(request, reply, (io) => generation.run(principal, prepared, { ...io, timing }), () => serverTiming(timing));
      } finally {
        prepared.ticket?.release();
        await prepared.reservation.release();
      }
    }
    const timing = { upstreamMs: 0, totalMs: 0 };
    try {
      const result = await generation.run(principal, prepared, { signal: abortedWhenClosed(request.raw.socket), timing });
      reply.header('server-timing', serverTiming(timing));
      return result;
    } catch (error) {
      // The caller is gone; there is nobody to answer.
      if (error instanceof CancelledError) throw new AppError('service_unavailable', 'The client closed the connection.');
      throw error;
    } finally {
      prepared.ticket?.release();
      await prepared.reservation.release();
    }
  });

  app.get('/generations', {
    config: { auth: 'read:code' },
    schema: { tags, security, summary: 'Your generations, newest first', querystring: PageQuerySchema, response: { 200: PageOf(GenerationResultSchema), ...errorResponses(400, 401, 403, 429) } },
  }, async (request) => {
    const { page, limit } = pageParams(request.query);
    return generation.list(request.principal!, page, limit);
  });

  app.get('/generations/:id', {
    config: { auth: 'read:code' },
    schema: { tags, security, summary: 'One generation', params: IdParamsSchema, response: { 200: GenerationResultSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => generation.get(request.principal!, request.params.id));

  app.get('/models', {
    config: { auth: 'read:code' },
    schema: { tags, security, summary: 'Models this server offers', response: { 200: Type.Object({ data: Type.Array(ModelInfoSchema), default: Type.String() }), ...errorResponses(401, 403, 429) } },
  }, async () => ({ data: models.list(), default: models.default }));

  app.get('/languages', {
    config: { auth: 'read:code' },
    schema: { tags, security, summary: 'Languages a generation may ask for', response: { 200: Type.Object({ data: Type.Array(LanguageInfoSchema) }), ...errorResponses(401, 403, 429) } },
  }, async () => ({ data: generation.languages.list() }));
};
