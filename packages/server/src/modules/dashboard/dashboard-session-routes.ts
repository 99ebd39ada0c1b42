import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { LoginBodySchema, RegisterBodySchema } from '@codeloom/protocol';
import type { AuthService } from '../auth/auth-service.js';
import { AppError } from '../../errors.js';
import { errorResponses } from '../../plugins/openapi.js';
import { csrfMatches, csrfToken } from '../oauth/browser-session.js';
import type { DashboardSessions } from './dashboard-sessions.js';

const tags = ['Dashboard'];
const TokenSchema = Type.Object({
  access_token: Type.String(), expires_in: Type.Integer(),
  user: Type.Object({ id: Type.String(), email: Type.String(), name: Type.String(), plan: Type.String() }),
});
const headerValue = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/**
 * The dashboard's cookie session (docs/dashboard.md): GET …/csrf hands the
 * page its double-submit token (the same HttpOnly codeloom_csrf cookie the
 * OAuth pages use, echoed in the X-CSRF-Token header); every POST here
 * needs that header, so a cross-site page can neither sign someone in or
 * out nor obtain an access token. Rate-limited per address like any
 * anonymous request.
 */
export interface DashboardDeps {
  /** Sign-up and the password check of sign-in (under the login throttle). */
  auth: Pick<AuthService, 'register' | 'authenticate' | 'signupPolicy'>;
  sessions: DashboardSessions;
  /** The public URL of this server: the CSRF check compares request origins with it. */
  issuer: string;
  /** Whether reset links can be mailed (CODELOOM_SMTP_URL is set): the sign-in page offers "Forgot password?" then. */
  passwordResetByMail?: boolean;
}

const ConfigSchema = Type.Object({
  signup: Type.String({ description: 'CODELOOM_SIGNUP: open, invite, domains or closed.' }),
  first_account: Type.Boolean({ description: 'The database has no account yet: the first sign-up is allowed whatever the mode.' }),
  password_reset_by_mail: Type.Boolean({ description: 'Whether the server can mail password reset links (CODELOOM_SMTP_URL is set).' }),
});

export const dashboardSessionRoutes = ({ auth, sessions, issuer, passwordResetByMail = false }: DashboardDeps, prefix: string): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const publicOrigin = new URL(issuer).origin;
  const requireCsrf = async (request: FastifyRequest) => {
    if (!csrfMatches(request, headerValue(request.headers['x-csrf-token']), publicOrigin)) {
      throw new AppError('forbidden', 'Missing or wrong X-CSRF-Token header: reload the dashboard and try again.');
    }
  };
  const token = async (request: FastifyRequest) => {
    const issued = await sessions.accessToken(request);
    if (!issued) throw new AppError('unauthorized', 'Not signed in to the dashboard.');
    return issued;
  };

  app.get(`${prefix}/csrf`, {
    schema: { tags, summary: 'The CSRF token the dashboard sends as X-CSRF-Token (also set as an HttpOnly cookie)', response: { 200: Type.Object({ csrf_token: Type.String() }) } },
  }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    return { csrf_token: csrfToken(request, reply) };
  });

  app.get(`${prefix}/config`, {
    schema: { tags, summary: 'What the signed-out pages offer: sign-up (by CODELOOM_SIGNUP) and password reset by mail', response: { 200: ConfigSchema } },
  }, async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    const { mode, firstAccount } = await auth.signupPolicy();
    return { signup: mode, first_account: firstAccount, password_reset_by_mail: passwordResetByMail };
  });

  app.post(`${prefix}/sign-up`, {
    preHandler: requireCsrf,
    schema: { tags, summary: 'Create an account and sign the dashboard in (sets the HttpOnly session cookie)', body: RegisterBodySchema, response: { 200: TokenSchema, ...errorResponses(400, 403, 409, 429) } },
  }, async (request, reply) => {
    const created = await auth.register(request.body, 'production');
    const account = await sessions.adoptRegistration(created);
    if (!account) throw new AppError('unauthorized');
    const sessionId = await sessions.start(request, reply, account.user.id);
    return reply.header('cache-control', 'no-store').send(await sessions.issue(account, sessionId));
  });

  app.post(`${prefix}/sign-in`, {
    preHandler: requireCsrf,
    schema: { tags, summary: 'Sign the dashboard in with email and password (sets the HttpOnly session cookie)', body: LoginBodySchema, response: { 200: TokenSchema, ...errorResponses(400, 401, 403, 429) } },
  }, async (request, reply) => {
    const account = await auth.authenticate(request.body.email, request.body.password, request.ip);
    const sessionId = await sessions.start(request, reply, account.user.id);
    return reply.header('cache-control', 'no-store').send(await sessions.issue(account, sessionId));
  });

  app.post(`${prefix}/token`, {
    preHandler: requireCsrf,
    schema: { tags, summary: 'A short-lived access token for the signed-in dashboard (kept in memory by the page)', response: { 200: TokenSchema, ...errorResponses(401, 403, 429) } },
  }, async (request, reply) => reply.header('cache-control', 'no-store').send(await token(request)));

  app.post(`${prefix}/sign-out`, {
    preHandler: requireCsrf,
    schema: { tags, summary: 'Sign out: the session and every access token it issued stop working at once', response: { 200: Type.Object({ success: Type.Literal(true) }), ...errorResponses(403, 429) } },
  }, async (request, reply) => {
    await sessions.end(request, reply);
    return { success: true as const };
  });
};
