import { whileClientConnected } from '../generate/client-abort.js';
import { callOrigin } from '../../plugins/tracing.js';
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ModelRegistry } from '../../providers/model-registry.js';
import { AppError } from '../../errors.js';
import { newId } from '../../storage/ids.js';
import { MODEL_CALL_ERRORS } from '../../plugins/openapi.js';
import { serverTiming } from '../generate/generation-service.js';
import type { ChatCalls } from '../generate/chat-call.js';
import { registerAnthropicErrors } from './anthropic-errors.js';
import { fromCountTokensBody, fromMessagesBody, invalid } from './anthropic-request.js';
import { messageIdFor, toMessage } from './anthropic-response.js';
import { streamAnthropic } from './anthropic-sse.js';
import {
  AnthropicCountTokensBodySchema, AnthropicCountTokensSchema, AnthropicErrorSchema, AnthropicMessageSchema, AnthropicMessagesBodySchema,
  AnthropicModelListQuerySchema, AnthropicModelListSchema, AnthropicModelSchema,
} from './anthropic-schemas.js';

/** Base URL for Anthropic clients: http://HOST:PORT/anthropic (the SDK adds /v1/messages; docs/anthropic.md). */
export const ANTHROPIC_PREFIX = '/anthropic';

const tags = ['Anthropic-compatible'];
const security: Array<Record<string, string[]>> = [{ anthropicApiKey: [] }, { bearer: [] }];
const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, { ...AnthropicErrorSchema, description: `{"type": "error", "error": {...}} (${s})${MODEL_CALL_ERRORS[s] ? `; the error.message says which: ${MODEL_CALL_ERRORS[s]}` : ''}` }]));

/** `anthropic-version`: any date (the SDK sends its own; 2023-06-01 is the first). Absent is accepted: see docs/anthropic.md. */
const VERSION = /^\d{4}-\d{2}-\d{2}$/;
const headers = Type.Object({
  'anthropic-version': Type.Optional(Type.String({ description: 'Accepted whatever date it names (the SDK and Claude Code send one); optional here, though Anthropic requires it.' })),
  'x-api-key': Type.Optional(Type.String({ description: 'A Codeloom API key (cl_live_… / cl_test_…) or access token; or send it as Authorization: Bearer.' })),
});

export const anthropicRoutes = ({ calls, models }: { calls: ChatCalls; models: ModelRegistry }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  registerAnthropicErrors(fastify);
  // Anthropic's clients read the request id from `request-id` (the SDK's `_request_id`); it is Codeloom's x-request-id.
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('request-id', request.id);
    const version = request.headers['anthropic-version'];
    if (typeof version === 'string' && !VERSION.test(version.trim())) return done(invalid('anthropic-version', `"${version}" is not a version date (YYYY-MM-DD), e.g. 2023-06-01`));
    done();
  });

  app.post('/v1/messages', {
    config: { auth: 'write:code', apiKeyHeader: true },
    schema: {
      tags, security, headers, summary: 'Create a message (Anthropic Messages API)',
      description: 'Anthropic\'s Messages API: `model` and `max_tokens` (required), `system` (a string or text blocks), `messages` (user and assistant; a string or `text`, `tool_use` and `tool_result` blocks), `tools` (`name`, `description`, `input_schema`), `tool_choice` (`auto`, `any`, `tool`, `none`; `disable_parallel_tool_use`), `stop_sequences`, `temperature`, `top_p`, `top_k` (models that take it), `metadata` (not acted on), `stream`. Image and document blocks, server tools and extended thinking are a 400 naming the field. Streaming answers the Messages API\'s SSE events (message_start … message_stop). Counted against the same request limits, token windows and budgets as /api/v1/generate and recorded in generation history and usage. Errors use Anthropic\'s shape.',
      body: AnthropicMessagesBodySchema,
      response: { 200: AnthropicMessageSchema, ...errors(400, 401, 403, 404, 413, 415, 429, 500, 502, 503, 504) },
    },
  }, async (request, reply) => {
    const principal = request.principal!;
    const spec = fromMessagesBody(request.body);
    const generationId = newId('gen');
    const id = messageIdFor(generationId);
    if (spec.stream) {
      // The sandbox knows the prompt's tokens before it answers; other models' counts come with message_delta.
      const counted = calls.countPromptTokens(principal, spec);
      return streamAnthropic(request, reply, { id, requestedModel: counted.model.id, inputTokensAtStart: counted.exact ? counted.tokens : 0 },
        (io) => calls.call(principal, spec, 'anthropic.messages', { id: generationId, origin: callOrigin(request), ...io }));
    }
    return whileClientConnected(reply, async (signal) => {
      const r = await calls.call(principal, spec, 'anthropic.messages', { id: generationId, signal, origin: callOrigin(request) });
      reply.header('server-timing', serverTiming({ upstreamMs: r.upstreamMs, totalMs: r.totalMs }));
      return toMessage(id, r);
    });
  });

  app.post('/v1/messages/count_tokens', {
    config: { auth: 'write:code', apiKeyHeader: true },
    schema: {
      tags, security, headers, summary: 'Count a message\'s input tokens (Anthropic Messages API)',
      description: 'The input tokens of a Messages API request (`model`, `system`, `messages`, `tools`, `tool_choice`) as Codeloom counts them: exact for the sandbox model; for other models the upper bound Codeloom\'s token windows reserve (UTF-8 bytes plus a per-message overhead: never fewer than the model\'s own tokenizer makes, often about four times as many for English). Nothing is called, charged or recorded.',
      body: AnthropicCountTokensBodySchema,
      response: { 200: AnthropicCountTokensSchema, ...errors(400, 401, 403, 404, 413, 415, 429) },
    },
  }, async (request) => {
    const counted = calls.countPromptTokens(request.principal!, fromCountTokensBody(request.body));
    return { input_tokens: counted.tokens };
  });

  app.get('/v1/models', {
    config: { auth: 'read:code', apiKeyHeader: true },
    schema: {
      tags, security, headers, querystring: AnthropicModelListQuerySchema,
      summary: 'Models this server offers (Anthropic format)', description: 'Every configured model, in Anthropic\'s list shape, paged with `limit` (default 20), `after_id` and `before_id`.',
      response: { 200: AnthropicModelListSchema, ...errors(400, 401, 403, 429) },
    },
  }, async (request) => {
    const all = models.list();
    const { limit = 20, after_id: after, before_id: before } = request.query;
    const position = (id: string, param: string) => {
      const i = all.findIndex((m) => m.id === id);
      if (i < 0) throw invalid(param, `"${id}" is not a model of this server`);
      return i;
    };
    let page: typeof all;
    let hasMore: boolean;
    if (before !== undefined) {
      const end = position(before, 'before_id');
      page = all.slice(Math.max(0, end - limit), end);
      hasMore = end - limit > 0;
    } else {
      const from = after !== undefined ? position(after, 'after_id') + 1 : 0;
      page = all.slice(from, from + limit);
      hasMore = from + limit < all.length;
    }
    return { data: page.map(toAnthropicModel), has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null };
  });

  // Ids may hold a slash (`org/model` on vLLM): sent encoded (`%2F`, as the SDK does) it is one parameter; sent bare, the wildcard twin takes it.
  const oneModel = async (id: string) => {
    const found = models.list().find((m) => m.id === id);
    if (!found) throw new AppError('not_found', `model: ${id} (GET /anthropic/v1/models lists the models this server serves)`);
    return toAnthropicModel(found);
  };
  app.get('/v1/models/:model_id', {
    config: { auth: 'read:code', apiKeyHeader: true },
    schema: {
      tags, security, headers, summary: 'One model (Anthropic format)',
      params: Type.Object({ model_id: Type.String({ minLength: 1, maxLength: 200, description: 'The model id; a slash in it is sent as %2F.' }) }),
      response: { 200: AnthropicModelSchema, ...errors(401, 403, 404, 429) },
    },
  }, async (request) => oneModel(request.params.model_id));
  app.get('/v1/models/*', { config: { auth: 'read:code', apiKeyHeader: true }, schema: { hide: true, response: { 200: AnthropicModelSchema } } },
    async (request) => oneModel((request.params as { '*': string })['*']));
};

/** Models have no creation time of their own; the server's start stands in, stable while it runs. */
const STARTED = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

const toAnthropicModel = (m: { id: string; description: string }) => ({ type: 'model' as const, id: m.id, display_name: m.id, created_at: STARTED });
