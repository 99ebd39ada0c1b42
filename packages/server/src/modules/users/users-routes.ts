import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { PLANS, ProfileSchema, type Profile } from '@codeloom/protocol';
import { errorResponses } from '../../plugins/openapi.js';

export const usersRoutes = (): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/user/profile', {
    config: { auth: 'any' },
    schema: { tags: ['Users'], summary: 'Your profile, permissions and rate limits (also at /v1/user/profile)', security: [{ bearer: [] }], response: { 200: ProfileSchema, ...errorResponses(401, 429) } },
  }, async (request): Promise<Profile> => {
    const p = request.principal!;
    return {
      id: p.user.id,
      email: p.user.email,
      name: p.user.name,
      organization: p.org,
      permissions: p.scopes,
      rate_limits: { ...PLANS[p.org.plan].limits },
      environment: p.environment,
    };
  });
};
