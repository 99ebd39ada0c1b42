import { whileClientConnected } from '../generate/client-abort.js';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ChatCompletionBodySchema, ChatCompletionSchema, CompletionBodySchema, CompletionSchema, OpenAIErrorSchema, OpenAIModelListSchema, OpenAIModelSchema } from '@codeloom/protocol';
import { Type } from '@sinclair/typebox';
import { EmbeddingsBodySchema, EmbeddingsResponseSchema } from '@codeloom/protocol';
import type { EmbeddingsService } from './openai-embeddings.js';
import type { ModelRegistry } from '../../providers/model-registry.js';
import { AppError } from '../../errors.js';
import { newId } from '../../storage/ids.js';
import { MODEL_CALL_ERRORS } from '../../plugins/openapi.js';
import { serverTiming } from '../generate/generation-service.js';
import { registerOpenAIErrors } from './openai-errors.js';
import { fromChatBody, fromCompletionBody, toFinishReason, type OpenAICallSpec } from './openai-request.js';
import type { OpenAICallResult, OpenAIService } from './openai-service.js';
import { streamOpenAI } from './openai-sse.js';
import { callOrigin } from '../../plugins/tracing.js';

/** Base URL for OpenAI clients: http://HOST:PORT/openai/v1 (docs/openai.md). */
export const OPENAI_PREFIX = '/openai/v1';

const tags = ['OpenAI-compatible'];
const security = [{ bearer: [] }];
const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, { ...OpenAIErrorSchema, description: `{"error": {...}} (${s})${MODEL_CALL_ERRORS[s] ? `; error.code: ${MODEL_CALL_ERRORS[s]}` : ''}` }]));

export const openAIRoutes = ({ openai: service, models, embeddings }: { openai: OpenAIService; models: ModelRegistry; embeddings: EmbeddingsService }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  registerOpenAIErrors(fastify);

  /** One call, JSON (a chat.completion or text_completion object, checked by the route's response schema) or streamed. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function serve(request: FastifyRequest, reply: FastifyReply, spec: OpenAICallSpec, kind: 'chat' | 'completion'): Promise<any> {
    const principal = request.principal!;
    const id = newId('gen');
    if (spec.stream) {
      return streamOpenAI(request, reply, { id, kind, includeUsage: spec.includeUsage, requestedModel: spec.model ?? models.default },
        (io) => service.call(principal, spec, kind, { id, origin: callOrigin(request), ...io }));
    }
    return whileClientConnected(reply, async (signal) => {
      const r = await service.call(principal, spec, kind, { id, signal, origin: callOrigin(request) });
      reply.header('server-timing', serverTiming({ upstreamMs: r.upstreamMs, totalMs: r.totalMs }));
      const usage = { prompt_tokens: r.usage.promptTokens, completion_tokens: r.usage.completionTokens, total_tokens: r.usage.promptTokens + r.usage.completionTokens };
      const finish_reason = toFinishReason(r.finishReason);
      return kind === 'chat'
        ? { id, object: 'chat.completion', created: r.created, model: r.model.id, choices: [{ index: 0, message: chatMessage(r), logprobs: null, finish_reason }], usage }
        : { id, object: 'text_completion', created: r.created, model: r.model.id, choices: [{ index: 0, text: r.text, logprobs: null, finish_reason }], usage };
    });
  }

  app.post('/chat/completions', {
    config: { auth: 'write:code' },
    schema: {
      tags, security, summary: 'Chat completion (OpenAI wire format)',
      description: 'OpenAI\'s chat completions: `messages` (system, developer, user, assistant with `tool_calls`, tool with `tool_call_id`; string or text-part content), `tools`, `tool_choice`, `parallel_tool_calls`, `response_format` (text, json_object, json_schema), `max_tokens` / `max_completion_tokens`, `temperature`, `top_p`, `stop` (up to 64), `stream`, `stream_options.include_usage`, `user`. A field the model cannot honour is a 400 naming it in `param`. Streaming answers `chat.completion.chunk` SSE ending with `data: [DONE]`. Counted against the same request limits and token budget as /api/v1/generate and recorded in generation history. Errors use OpenAI\'s shape.',
      body: ChatCompletionBodySchema,
      response: { 200: ChatCompletionSchema, ...errors(400, 401, 403, 404, 413, 415, 429, 502, 503, 504) },
    },
  }, async (request, reply) => serve(request, reply, fromChatBody(request.body), 'chat'));

  app.post('/completions', {
    config: { auth: 'write:code' },
    schema: {
      tags, security, summary: 'Text completion, with fill-in-the-middle (`suffix`)',
      description: 'OpenAI\'s legacy completions, as editors use for autocomplete: `prompt` (a string) and optional `suffix` (fill-in-the-middle; a model that cannot is a 400 with `param: "suffix"`). Streaming answers `text_completion` chunks ending with `data: [DONE]`.',
      body: CompletionBodySchema,
      response: { 200: CompletionSchema, ...errors(400, 401, 403, 404, 413, 415, 429, 502, 503, 504) },
    },
  }, async (request, reply) => serve(request, reply, fromCompletionBody(request.body), 'completion'));

  app.post('/embeddings', {
    config: { auth: 'write:code' },
    schema: {
      tags, security, summary: 'Embeddings (OpenAI format) from a model that offers them',
      description: 'The sandbox model gives deterministic offline vectors (feature hashing, 256 dimensions unless `dimensions` says otherwise); upstream models named in CODELOOM_OPENAI_EMBEDDING_MODELS get the inputs unchanged. Inputs are reserved in the token windows and budgets like a model call (their UTF-8 bytes, or a token-id input\'s length), settled to what the provider reports, and recorded in usage.',
      body: EmbeddingsBodySchema, response: { 200: EmbeddingsResponseSchema, ...errors(400, 401, 403, 404, 429, 502, 503, 504) },
    },
  }, async (request, reply) => {
    return whileClientConnected(reply, (signal) => embeddings.embed(request.principal!, request.body, signal));
  });

  app.get('/models', {
    config: { auth: 'read:code' },
    schema: { tags, security, summary: 'Models this server offers (OpenAI format)', response: { 200: OpenAIModelListSchema, ...errors(401, 403, 429) } },
  }, async () => ({
    object: 'list' as const,
    data: models.list().map(toOpenAIModel),
  }));

  // One model. Ids may hold a slash (`org/model` on vLLM): sent encoded (`%2F`, as the openai SDKs do) it is one
  // parameter; sent bare, the hidden wildcard twin takes it.
  const oneModel = async (id: string) => {
    const found = models.list().find((m) => m.id === id);
    if (!found) throw new AppError('not_found', `The model "${id}" does not exist on this server; GET /openai/v1/models lists the ones it serves.`);
    return toOpenAIModel(found);
  };
  app.get('/models/:model', {
    config: { auth: 'read:code' },
    schema: {
      tags, security, summary: 'One model (OpenAI format)', params: Type.Object({ model: Type.String({ minLength: 1, maxLength: 200, description: 'The model id; a slash in it is sent as %2F.' }) }),
      response: { 200: OpenAIModelSchema, ...errors(401, 403, 404, 429) },
    },
  }, async (request) => oneModel(request.params.model));
  app.get('/models/*', { config: { auth: 'read:code' }, schema: { hide: true, response: { 200: OpenAIModelSchema } } },
    async (request) => oneModel((request.params as { '*': string })['*']));
};

const toOpenAIModel = (m: { id: string; provider: string }) => ({ id: m.id, object: 'model' as const, created: STARTED, owned_by: m.provider === 'sandbox' ? 'codeloom' : m.provider });

/** The answer as OpenAI's assistant message: tool calls as `tool_calls` (content null when there is no text). */
function chatMessage(r: OpenAICallResult) {
  if (!r.toolCalls?.length) return { role: 'assistant', content: r.text, refusal: null };
  return {
    role: 'assistant', content: r.text === '' ? null : r.text, refusal: null,
    tool_calls: r.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
  };
}

/** Models have no creation time of their own; the server's start stands in, stable while it runs. */
const STARTED = Math.floor(Date.now() / 1000);
