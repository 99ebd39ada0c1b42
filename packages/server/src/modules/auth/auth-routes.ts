import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { AuthResponseSchema, LoginBodySchema, RefreshBodySchema, RegisterBodySchema, SuccessSchema, VerifyResponseSchema, type VerifyResponse } from '@codeloom/protocol';
import { signInEnvironment } from '../../identity/environments.js';
import { bearerCredential } from '../../identity/token-formats.js';
import { AppError } from '../../errors.js';
import { errorResponses } from '../../plugins/openapi.js';
import type { AuthService } from './auth-service.js';

const tags = ['Authentication'];
const envOf = (request: FastifyRequest) => signInEnvironment(request.headers['x-environment'] as string | undefined);

export const authRoutes = ({ auth }: { auth: AuthService }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/auth/register', {
    schema: { tags, summary: 'Create an account (and its personal organization on the free plan)', body: RegisterBodySchema, response: { 201: AuthResponseSchema, ...errorResponses(400, 403, 409, 413, 415, 429) }, description: 'CODELOOM_SIGNUP decides who may register: a refused sign-up is 403 `signup_closed`, its `detail` naming the mode (docs/api.md, Sign-up modes).' },
  }, async (request, reply) => reply.code(201).send(await auth.register(request.body, envOf(request))));

  app.post('/auth/login', {
    schema: { tags, summary: 'Sign in with email and password', body: LoginBodySchema, response: { 200: AuthResponseSchema, ...errorResponses(400, 401, 429) } },
  }, async (request) => auth.login(request.body, request.ip, envOf(request)));

  app.post('/auth/refresh', {
    schema: { tags, summary: 'Trade a refresh token for new tokens (each refresh token works once)', body: RefreshBodySchema, response: { 200: AuthResponseSchema, ...errorResponses(400, 401, 429) } },
  }, async (request) => {
    const token = request.body?.refreshToken ?? request.body?.refresh_token;
    if (!token) throw new AppError('validation_failed', 'Send refreshToken or refresh_token.', { errors: [{ path: '/refreshToken', message: 'is required' }] });
    return auth.refresh(token);
  });

  app.post('/auth/logout', {
    config: { auth: 'any' },
    schema: { tags, summary: 'End this session: its access and refresh tokens stop working at once', security: [{ bearer: [] }], response: { 200: SuccessSchema, ...errorResponses(401, 403, 429) } },
  }, async (request) => {
    await auth.logout(request.principal!);
    return { success: true };
  });

  app.get('/auth/verify', {
    config: { auth: 'any' },
    schema: { tags, summary: 'Who am I: the verified identity behind this credential', security: [{ bearer: [] }], response: { 200: VerifyResponseSchema, ...errorResponses(401, 429) } },
  }, async (request): Promise<VerifyResponse> => {
    const p = request.principal!;
    return {
      valid: true,
      user: p.user,
      organization: { id: p.org.id, name: p.org.name },
      subscription: { plan: p.org.plan },
      credential: { type: p.type, scopes: p.scopes, environment: p.environment },
    };
  });
};

/** `POST /auth/refresh` (unversioned): the refresh token arrives as the bearer credential. */
export const bearerRefreshRoute = ({ auth }: { auth: AuthService }): FastifyPluginAsync => async (app) => {
  app.post('/auth/refresh', {
    schema: { tags, summary: 'Refresh with the refresh token as Authorization: Bearer <refresh token>', response: { 200: AuthResponseSchema, ...errorResponses(401, 429) } },
  }, async (request) => {
    const token = bearerCredential(request.headers.authorization ?? '');
    if (!token) throw new AppError('unauthorized', 'Send the refresh token as Authorization: Bearer <refresh token>.');
    return auth.refresh(token);
  });
};
