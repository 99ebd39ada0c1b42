import type { FastifyPluginAsync } from 'fastify';
import {
  AuthorizationServerMetadataSchema, IntrospectionResponseSchema, OAuthErrorSchema, OAuthTokenActionSchema,
  OAuthTokenRequestSchema, OAuthTokenResponseSchema,
} from '@codeloom/protocol';
import type { OAuthService } from './oauth-service.js';
import { formFields, registerFormParser, registerOAuthErrorHandler } from './oauth-http.js';

const tags = ['OAuth 2.0'];
const consumes = ['application/x-www-form-urlencoded', 'application/json'];
const oauthErrors = { 400: OAuthErrorSchema, 401: OAuthErrorSchema };
const noStore = { 'cache-control': 'no-store', pragma: 'no-cache' };

/**
 * The machine-facing endpoints of RFC 6749, 7009, 7662 and 8414. Encapsulated:
 * the form parser and the RFC 6749 error shape apply to these routes only.
 */
export const oauthEndpointRoutes = (oauth: OAuthService): FastifyPluginAsync => async (app) => {
  registerFormParser(app);
  registerOAuthErrorHandler(app);

  app.post('/oauth/token', {
    schema: {
      tags, consumes, body: OAuthTokenRequestSchema, response: { 200: OAuthTokenResponseSchema, ...oauthErrors },
      summary: 'Exchange an authorization code (with PKCE) or a refresh token for tokens',
      description: 'grant_type=authorization_code (code, redirect_uri, code_verifier) or grant_type=refresh_token (refresh_token, scope?). Confidential clients authenticate with HTTP Basic or client_id + client_secret; public clients send client_id only. Refresh tokens rotate: each works once, and presenting a used one revokes the whole grant. Errors are RFC 6749 §5.2 JSON, not problem documents.',
    },
  }, async (request, reply) => {
    const result = await oauth.token(request.headers, formFields(request.body));
    return reply.headers(noStore).send(result.body);
  });

  app.post('/oauth/revoke', {
    schema: {
      tags, consumes, body: OAuthTokenActionSchema, response: { 200: { type: 'null', description: 'Revoked, or nothing to revoke (RFC 7009 answers 200 for unknown tokens)' }, ...oauthErrors },
      summary: 'Revoke an access or refresh token (RFC 7009)',
      description: 'A refresh token revokes its whole grant, access tokens included; an access token only itself. Client-authenticated like /oauth/token.',
    },
  }, async (request, reply) => {
    await oauth.revoke(request.headers, formFields(request.body));
    return reply.headers(noStore).code(200).send();
  });

  app.post('/oauth/introspect', {
    schema: {
      tags, consumes, body: OAuthTokenActionSchema, response: { 200: IntrospectionResponseSchema, ...oauthErrors },
      summary: 'Is this token active, and what may it do? (RFC 7662)',
      description: 'For confidential clients (HTTP Basic or client_secret_post), about their own tokens; any other token is {"active": false}.',
    },
  }, async (request, reply) => reply.headers(noStore).send(await oauth.introspect(request.headers, formFields(request.body))));

  app.get('/.well-known/oauth-authorization-server', {
    config: { rateLimit: false },
    schema: { tags, summary: 'Authorization server metadata (RFC 8414)', response: { 200: AuthorizationServerMetadataSchema } },
  }, async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(oauth.metadata()));
};
