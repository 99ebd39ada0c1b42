import type { FastifyPluginAsync } from 'fastify';
import { oauthEndpointRoutes } from './oauth-endpoint-routes.js';
import { oauthPageRoutes, type OAuthPageDeps } from './oauth-page-routes.js';

/** The unversioned OAuth 2.0 authorization server: /oauth/… and its RFC 8414 metadata. Client registration lives under /api/v1 (oauth-client-routes.ts). */
export const oauthRoutes = (deps: OAuthPageDeps): FastifyPluginAsync => async (app) => {
  await app.register(oauthEndpointRoutes(deps.oauth));
  await app.register(oauthPageRoutes(deps));
};
