import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import type { AuthorizeCheck, AuthorizeParams } from './authorize-request.js';
import type { AuthService } from '../auth/auth-service.js';
import type { OAuthService } from './oauth-service.js';
import { csrfMatches, csrfToken, rotateCsrfToken, type BrowserSessions } from './browser-session.js';
import { formFields, registerFormParser, registerPageErrorHandler } from './oauth-http.js';
import { renderConsentPage, renderErrorPage, renderSignInPage } from './pages/oauth-pages.js';
import { sendPage } from './pages/page-layout.js';

type Ok = Extract<AuthorizeCheck, { kind: 'ok' }>;
const pageSchema = { hide: true };
const authorizeUrl = (params: AuthorizeParams) => `/oauth/authorize?${new URLSearchParams(params as Record<string, string>)}`;
const originOf = (uri: string | undefined) => { try { return uri ? [new URL(uri).origin] : []; } catch { return []; } };

export interface OAuthPageDeps {
  oauth: OAuthService;
  /** Checks the sign-in form's email and password (under the login throttle). */
  auth: Pick<AuthService, 'authenticate'>;
  browserSessions: BrowserSessions;
}

/**
 * The web pages of the authorization code flow: GET /oauth/authorize shows
 * a sign-in form (no browser session) or the consent page; the forms post
 * back here with the authorization request in hidden fields, which is
 * checked again on every post.
 */
export const oauthPageRoutes = ({ oauth, auth, browserSessions: sessions }: OAuthPageDeps): FastifyPluginAsync => async (app) => {
  registerFormParser(app);
  registerPageErrorHandler(app);
  const publicOrigin = new URL(oauth.issuer).origin;
  const csrfOk = (request: FastifyRequest, body: Record<string, string>) => csrfMatches(request, body.csrf_token, publicOrigin);

  /** Shows the error page or redirects with the error; undefined when the request is good. */
  async function checked(raw: unknown, reply: FastifyReply, redirectCode: 302 | 303): Promise<Ok | undefined> {
    const check = await oauth.inspect(raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {});
    if (check.kind === 'error_page') { sendPage(reply, 400, renderErrorPage(check)); return undefined; }
    if (check.kind === 'error_redirect') { reply.redirect(check.location, redirectCode); return undefined; }
    return check;
  }

  const signIn = (request: FastifyRequest, reply: FastifyReply, check: Ok, status: number, extra: { email?: string; error?: string } = {}) =>
    sendPage(reply, status, renderSignInPage({ client: check.client, params: check.params, csrf: csrfToken(request, reply), ...extra }));

  app.get('/oauth/authorize', {
    schema: {
      tags: ['OAuth 2.0'],
      summary: 'Sign-in and consent page of the authorization code flow',
      description: 'Query: response_type=code, client_id, redirect_uri (exactly as registered), scope?, state?, code_challenge + code_challenge_method=S256 (required for public clients). A bad client_id or redirect_uri shows an error page and never redirects; other errors redirect to redirect_uri with error, state and iss.',
    },
  }, async (request, reply) => {
    const check = await checked(request.query, reply, 302);
    if (!check) return reply;
    const account = await sessions.current(request);
    if (!account) return signIn(request, reply, check, 200);
    return sendPage(reply, 200, renderConsentPage({ client: check.client, params: check.params, scopes: check.scopes, account, csrf: csrfToken(request, reply) }), originOf(check.params.redirect_uri));
  });

  app.post('/oauth/sign-in', { schema: pageSchema }, async (request, reply) => {
    const body = formFields(request.body);
    const check = await checked(body, reply, 303);
    if (!check) return reply;
    const email = body.email?.slice(0, 254) ?? '';
    if (!csrfOk(request, body)) return signIn(request, reply, check, 403, { email, error: 'This form expired. Please sign in again.' });
    if (!email.trim() || !body.password) return signIn(request, reply, check, 400, { email, error: 'Enter your email and password.' });
    try {
      const account = await auth.authenticate(email, body.password.slice(0, 256), request.ip);
      await sessions.start(request, reply, account.user.id);
      rotateCsrfToken(request, reply);
    } catch (error) {
      if (!(error instanceof AppError) || !['invalid_credentials', 'rate_limited'].includes(error.code)) throw error;
      if (error.extra.headers) reply.headers(error.extra.headers);
      const message = error.code === 'rate_limited' ? error.message : 'Wrong email or password.';
      return signIn(request, reply, check, error.status, { email, error: message });
    }
    return reply.redirect(authorizeUrl(check.params), 303);
  });

  app.post('/oauth/authorize', { schema: pageSchema }, async (request, reply) => {
    const body = formFields(request.body);
    const check = await checked(body, reply, 303);
    if (!check) return reply;
    const account = await sessions.current(request);
    if (!account) return signIn(request, reply, check, 401, { error: 'Your sign-in has ended. Please sign in again.' });
    const consent = (status: number, notice: string) => sendPage(reply, status,
      renderConsentPage({ client: check.client, params: check.params, scopes: check.scopes, account, csrf: csrfToken(request, reply), notice }), originOf(check.params.redirect_uri));
    // A failed check shows the page again instead of acting: the person can still confirm, a forged post achieves nothing.
    if (!csrfOk(request, body)) return consent(403, 'This page expired. Please confirm your choice again.');
    if (body.decision !== 'allow' && body.decision !== 'deny') return consent(400, 'Choose Allow or Deny.');
    return reply.redirect(await oauth.decide(check, account, body.decision === 'allow'), 303);
  });

  app.post('/oauth/sign-out', { schema: pageSchema }, async (request, reply) => {
    const body = formFields(request.body);
    const check = await checked(body, reply, 303);
    if (!check) return reply;
    if (!csrfOk(request, body)) return sendPage(reply, 403, renderErrorPage({ title: 'This page expired', message: 'Go back to the application and start again.' }));
    await sessions.end(request, reply);
    return reply.redirect(authorizeUrl(check.params), 303);
  });
};
