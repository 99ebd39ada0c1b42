import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ApiKeySchema, CreateApiKeyBodySchema, CreatedApiKeySchema, IdParamsSchema, PageOf, PageQuerySchema, SuccessSchema, UpdateApiKeyBodySchema } from '@codeloom/protocol';
import type { ApiKeysService } from './api-keys-service.js';
import { pageParams } from '../pagination.js';
import { errorResponses } from '../../plugins/openapi.js';

export const apiKeysRoutes = ({ apiKeys }: { apiKeys: ApiKeysService }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: 'any', sessionOnly: true } as const;
  const tags = ['API keys'];

  app.post('/api-keys', {
    config,
    schema: { tags, summary: 'Create an API key (the secret is shown once)', security: [{ bearer: [] }], body: CreateApiKeyBodySchema, response: { 201: CreatedApiKeySchema, ...errorResponses(400, 401, 403, 429) } },
  }, async (request, reply) => reply.code(201).send(await apiKeys.create(request.principal!, request.body)));

  app.get('/api-keys', {
    config,
    schema: { tags, summary: 'List your active API keys (never the secrets)', security: [{ bearer: [] }], querystring: PageQuerySchema, response: { 200: PageOf(ApiKeySchema), ...errorResponses(400, 401, 403, 429) } },
  }, async (request) => {
    const { page, limit } = pageParams(request.query);
    return apiKeys.list(request.principal!, page, limit);
  });

  app.patch('/api-keys/:id', {
    config,
    schema: { tags, summary: "Rename a key or change its own limits (each at most the plan's; null: the plan's alone)", security: [{ bearer: [] }], params: IdParamsSchema, body: UpdateApiKeyBodySchema, response: { 200: ApiKeySchema, ...errorResponses(400, 401, 403, 404, 429) } },
  }, async (request) => apiKeys.update(request.principal!, request.params.id, request.body));

  app.delete('/api-keys/:id', {
    config,
    schema: { tags, summary: 'Revoke an API key at once', security: [{ bearer: [] }], params: IdParamsSchema, response: { 200: SuccessSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => {
    await apiKeys.revoke(request.principal!, request.params.id);
    return { success: true };
  });
};
