import OAuth2Server from '@node-oauth/oauth2-server';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { asDependencyError } from '../../storage/dependency-errors.js';
import { toValidationErrors } from '../../plugins/validation.js';
import { renderErrorPage } from './pages/oauth-pages.js';
import { sendPage } from './pages/page-layout.js';

const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * application/x-www-form-urlencoded bodies, for this plugin's routes only
 * (the rest of the API keeps answering 415 to anything but JSON). A
 * repeated field becomes an array, which the string schemas then refuse:
 * RFC 6749 §3.1 forbids repeating a parameter.
 */
export function registerFormParser(app: FastifyInstance) {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: app.initialConfig.bodyLimit }, (_request, body, done) => {
    const out: Record<string, string | string[]> = {};
    for (const [key, value] of new URLSearchParams(body as string)) {
      if (UNSAFE_KEYS.has(key)) continue;
      const prev = out[key];
      out[key] = prev === undefined ? value : ([] as string[]).concat(prev, value);
    }
    done(null, out);
  });
}

/** The string fields of a parsed body (form or JSON); anything else is left out. */
export function formFields(body: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    for (const [k, v] of Object.entries(body)) if (typeof v === 'string') out[k] = v;
  }
  return out;
}

type ErrorHeaders = { headers?: Record<string, string> };

/** RFC 6749 §5.2 errors for /oauth/token, /oauth/revoke and /oauth/introspect: what OAuth client libraries parse. */
export function registerOAuthErrorHandler(app: FastifyInstance) {
  const problems = app.errorHandler; // the inherited problem-document handler
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // Only the POST endpoints speak RFC 6749 errors; the metadata document's errors are problem documents.
    if (request.method !== 'POST') return problems.call(app, error, request, reply);
    const send = (status: number, code: string, description: string, headers: Record<string, string> = {}) =>
      reply.code(status).headers({ ...headers, 'cache-control': 'no-store', pragma: 'no-cache' })
        .type('application/json; charset=utf-8').send({ error: code, error_description: description });
    if (error instanceof OAuth2Server.OAuthError) {
      const oauthError = error as OAuth2Server.OAuthError & ErrorHeaders;
      if (error instanceof OAuth2Server.ServerError) {
        request.log.error({ err: (error as { inner?: unknown }).inner ?? error }, 'oauth server error');
        return send(oauthError.code, 'server_error', 'The server could not complete the request; try again.');
      }
      const challenge = oauthError.headers?.['www-authenticate'];
      const headers: Record<string, string> = challenge ? { 'www-authenticate': challenge } : {};
      return send(oauthError.code, oauthError.name, oauthError.message, headers);
    }
    if (error.validation) {
      const first = toValidationErrors(error.validation, error.validationContext)[0]!;
      return send(400, 'invalid_request', `Invalid request: ${first.path.replace(/^\//, '')} ${first.message}`);
    }
    if (error instanceof AppError) {
      const headers = error.extra.headers ?? {};
      if (error.status === 429) return send(429, 'rate_limited', error.message, headers);
      if (error.status >= 500) return send(error.status, error.status === 503 ? 'temporarily_unavailable' : 'server_error', error.message, headers);
      return send(error.status === 413 ? 413 : 400, 'invalid_request', error.message, headers);
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return send(400, 'invalid_request', 'Send the body as application/x-www-form-urlencoded (or application/json).');
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return send(413, 'invalid_request', 'The body is too large.');
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) return send(400, 'invalid_request', error.message);
    const down = asDependencyError(error);
    if (down) return send(503, 'temporarily_unavailable', down.message, down.extra.headers);
    request.log.error({ err: error }, 'unhandled error');
    return send(500, 'server_error', 'Something went wrong on our side.');
  });
}

/** The sign-in and consent pages answer every failure with a page, never JSON and never a redirect. */
export function registerPageErrorHandler(app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof AppError) {
      if (error.extra.headers) reply.headers(error.extra.headers);
      const title = error.status === 429 ? 'Too many attempts' : error.status >= 500 ? 'Codeloom is unavailable' : 'Something is wrong with this request';
      return sendPage(reply, error.status, renderErrorPage({ title, message: error.message }));
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return sendPage(reply, error.statusCode === 415 ? 415 : 400, renderErrorPage({ title: 'Something is wrong with this request', message: 'The form could not be read. Go back and try again.' }));
    }
    if (asDependencyError(error)) return sendPage(reply, 503, renderErrorPage({ title: 'Codeloom is unavailable', message: 'A service Codeloom needs is unreachable. Try again in a moment.' }));
    request.log.error({ err: error }, 'unhandled error');
    return sendPage(reply, 500, renderErrorPage({ title: 'Something went wrong', message: 'Codeloom could not complete the request. Nothing was shared.' }));
  });
}
