import { whileClientConnected } from '../generate/client-abort.js';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { OpenAIErrorSchema, ResponseDeletedSchema, ResponseObjectSchema, ResponsesBodySchema } from '@codeloom/protocol';
import { AppError } from '../../errors.js';
import { MODEL_CALL_ERRORS } from '../../plugins/openapi.js';
import { sendOpenAIError } from './openai-errors.js';
import { fromResponsesBody } from './responses-request.js';
import { ResponsesWireError, type ResponsesService } from './responses-service.js';
import { streamResponses } from './responses-sse.js';
import { callOrigin } from '../../plugins/tracing.js';

const tags = ['OpenAI-compatible'];
const security = [{ bearer: [] }];
const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, { ...OpenAIErrorSchema, description: `{"error": {...}} (${s})${MODEL_CALL_ERRORS[s] ? `; error.code: ${MODEL_CALL_ERRORS[s]}` : ''}` }]));
/** A response object as JSON text, as it was built (or stored): its items are open objects the response schema would not serialise. */
const sendJson = (reply: FastifyReply, body: unknown) => (reply as FastifyReply).type('application/json; charset=utf-8').send(JSON.stringify(body));
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'The response id (`resp_…`).' }) });

/**
 * OpenAI's Responses API (CONTRACT §12.3), registered under /openai/v1 beside openai-routes.ts: POST
 * /responses (JSON or streamed events), GET and DELETE /responses/{id} for stored responses of the caller's
 * organization. Errors in OpenAI's shape (a stored response of another organization is a 404 like a missing one).
 */
export const responsesRoutes = ({ responses }: { responses: ResponsesService }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  fastify.setErrorHandler((error, request, reply) => {
    if (error instanceof ResponsesWireError) return reply.code(error.status).type('application/json; charset=utf-8').send({ error: error.body });
    return sendOpenAIError(request, reply, error);
  });
  fastify.addHook('onReady', async () => responses.start((error) => fastify.log.warn({ err: error }, 'expired responses not deleted'), (n) => fastify.log.info({ deleted: n }, 'expired responses deleted')));
  fastify.addHook('onClose', async () => responses.stop());

  app.post('/responses', {
    config: { auth: 'write:code' },
    schema: {
      tags, security, summary: 'Create a response (OpenAI Responses API)',
      description: 'OpenAI\'s Responses API: `input` (a string, or items: messages with role user, assistant, system or developer and string or `input_text`/`output_text` content; `function_call`; `function_call_output` with `call_id` and `output`), `instructions`, `tools` (type `function` only), `tool_choice`, `parallel_tool_calls`, `max_output_tokens`, `temperature`, `top_p`, `text.format` (text, json_object, json_schema), `stream`, `previous_response_id`, `store` (default true: kept 30 days or until deleted), `metadata`. Served by every model on the same path as chat completions (limits, budgets, usage, history, fallbacks); a field the model cannot honour is a 400 naming it in `param`. Streaming answers the Responses API events (`response.created` … `response.completed`).',
      body: ResponsesBodySchema,
      response: { 200: ResponseObjectSchema, ...errors(400, 401, 403, 404, 413, 415, 429, 502, 503, 504) },
    },
  }, async (request, reply) => {
    const principal = request.principal!;
    const spec = fromResponsesBody(request.body);
    if (spec.stream) return streamResponses(request, reply, spec, (io) => responses.create(principal, spec, { ...io, origin: callOrigin(request) }));
    return whileClientConnected(reply, async (signal) => {
      const response = await responses.create(principal, spec, { signal, origin: callOrigin(request) });
      // Sent as it is built (the response schema is for the OpenAPI document: items are open objects).
      return sendJson(reply, response);
    });
  });

  app.get('/responses/:id', {
    config: { auth: 'read:code' },
    schema: { tags, security, summary: 'A stored response (OpenAI Responses API)', params: IdParams, response: { 200: ResponseObjectSchema, ...errors(401, 403, 404, 429) } },
  }, async (request, reply) => sendJson(reply, await responses.get(request.principal!, request.params.id)));

  app.delete('/responses/:id', {
    config: { auth: 'write:code' },
    schema: { tags, security, summary: 'Delete a stored response (OpenAI Responses API)', params: IdParams, response: { 200: ResponseDeletedSchema, ...errors(401, 403, 404, 429) } },
  }, async (request) => responses.delete(request.principal!, request.params.id));

  // A known path with another method: 405 with Allow, as for the chat routes (this plugin is a sibling of theirs).
  const notAllowed = (url: string, allowed: string[]) => fastify.route({
    method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !allowed.includes(m)), url, schema: { hide: true },
    handler: async (request, reply) => {
      reply.header('allow', allowed.join(', '));
      throw new AppError('method_not_allowed', `${request.method} is not allowed on ${request.url.split('?')[0]}; use ${allowed.join(', ')}.`);
    },
  });
  notAllowed('/responses', ['POST']);
  notAllowed('/responses/:id', ['GET', 'DELETE']);
};
