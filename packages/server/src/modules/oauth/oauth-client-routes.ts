import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { CreateOAuthClientBodySchema, CreatedOAuthClientSchema, IdParamsSchema, OAuthClientSchema, PageOf, PageQuerySchema, SuccessSchema, UpdateOAuthClientBodySchema } from '@codeloom/protocol';
import { pageParams } from '../pagination.js';
import { errorResponses } from '../../plugins/openapi.js';
import type { OAuthClientsService } from './oauth-clients-service.js';

/** /api/v1/oauth/clients: managed with a session token only, like API keys (an OAuth token cannot register clients). */
export const oauthClientRoutes = ({ oauthClients: clients }: { oauthClients: OAuthClientsService }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: 'any', sessionOnly: true } as const;
  const tags = ['OAuth 2.0'];
  const security = [{ bearer: [] }];

  app.post('/oauth/clients', {
    config,
    schema: { tags, security, summary: 'Register an OAuth client (a confidential client\'s secret is shown once)', body: CreateOAuthClientBodySchema, response: { 201: CreatedOAuthClientSchema, ...errorResponses(400, 401, 403, 429) } },
  }, async (request, reply) => reply.code(201).send(await clients.create(request.principal!, request.body)));

  app.get('/oauth/clients', {
    config,
    schema: { tags, security, summary: 'List your OAuth clients (never their secrets)', querystring: PageQuerySchema, response: { 200: PageOf(OAuthClientSchema), ...errorResponses(400, 401, 403, 429) } },
  }, async (request) => {
    const { page, limit } = pageParams(request.query);
    return clients.list(request.principal!, page, limit);
  });

  app.get('/oauth/clients/:id', {
    config,
    schema: { tags, security, summary: 'One of your OAuth clients', params: IdParamsSchema, response: { 200: OAuthClientSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => clients.get(request.principal!, request.params.id));

  app.patch('/oauth/clients/:id', {
    config,
    schema: { tags, security, summary: 'Rename an OAuth client or replace its redirect URIs', params: IdParamsSchema, body: UpdateOAuthClientBodySchema, response: { 200: OAuthClientSchema, ...errorResponses(400, 401, 403, 404, 429) } },
  }, async (request) => clients.update(request.principal!, request.params.id, request.body));

  app.delete('/oauth/clients/:id', {
    config,
    schema: { tags, security, summary: 'Delete an OAuth client; every token it was issued stops working at once', params: IdParamsSchema, response: { 200: SuccessSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => {
    await clients.delete(request.principal!, request.params.id);
    return { success: true };
  });
};
