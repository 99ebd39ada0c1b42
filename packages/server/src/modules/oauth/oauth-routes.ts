import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../context.js';
import { OAuthService } from './oauth-service.js';
import { oauthEndpointRoutes } from './oauth-endpoint-routes.js';
import { oauthPageRoutes } from './oauth-page-routes.js';

/** The unversioned OAuth 2.0 authorization server: /oauth/… and its RFC 8414 metadata. Client registration lives under /api/v1 (oauth-client-routes.ts). */
export const oauthRoutes = (ctx: AppContext): FastifyPluginAsync => async (app) => {
  const config = ctx.config;
  const oauth = new OAuthService(ctx.store, {
    issuer: config.issuer!, accessTokenTtl: config.accessTokenTtl, refreshTokenTtl: config.refreshTokenTtl, oauthCodeTtl: config.oauthCodeTtl,
    events: ctx.credentialWatch,
  });
  await app.register(oauthEndpointRoutes(oauth));
  await app.register(oauthPageRoutes(ctx, oauth));
};
