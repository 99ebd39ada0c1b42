import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES, type ErrorCode } from '@codeloom/protocol';
import { AppError, ProviderError } from '../../errors.js';
import { toValidationErrors } from '../../plugins/validation.js';
import { frameworkErrorDetail } from '../../plugins/protocol-errors.js';

/** Anthropic's error object: what `@anthropic-ai/sdk` and Claude Code parse (`{"type": "error", "error": {type, message}}`). */
export interface AnthropicError { type: string; message: string }

export interface DescribedAnthropicError { status: number; error: AnthropicError; headers?: Record<string, string> | undefined }

/**
 * Anthropic's error `type` for one of our codes. Budgets and Codeloom's own limits are `rate_limit_error`
 * (429); a provider's refusal of the request is `invalid_request_error` (400); a 503 is `overloaded_error`.
 */
function typeFor(code: ErrorCode, status: number): string {
  if (code === 'payload_too_large') return 'request_too_large';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 503) return 'overloaded_error';
  if (status === 504) return 'timeout_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/** `/messages/0/content` → `messages.0.content`, as Anthropic names a field. */
export function toField(pointer: string | undefined): string | undefined {
  if (!pointer || pointer === '/') return undefined;
  return pointer.replace(/^(body|querystring|params|headers)\/?/, '').split('/').filter(Boolean).join('.') || undefined;
}

/** What a client reads when no credential came: the header Anthropic clients send is named. */
const UNAUTHORIZED = 'x-api-key header is required: send a Codeloom API key (cl_live_… or cl_test_…) or access token as x-api-key or Authorization: Bearer.';

/** Any failure as Anthropic's shape, with the status our registry gives it (429 keeps Retry-After). */
export function describeAnthropicError(request: FastifyRequest, error: unknown): DescribedAnthropicError {
  if (error instanceof AppError) {
    const status = ERROR_CODES[error.code].status;
    if (error instanceof ProviderError && error.kind === 'upstream_rejected') {
      const field = error.upstream.param ? ` (${error.upstream.param})` : '';
      return { status, headers: error.extra.headers, error: { type: 'invalid_request_error', message: `${error.message}${field}` } };
    }
    const message = error.code === 'unauthorized' ? UNAUTHORIZED : error.message;
    return { status, headers: error.extra.headers, error: { type: typeFor(error.code, status), message } };
  }
  const e = error as FastifyError;
  if (e.validation) {
    // One message per field: a nullable field's "must be null" branch says nothing useful.
    const errors = toValidationErrors(e.validation, e.validationContext).filter((x, i, all) => all.findIndex((y) => y.path === x.path) === i);
    // Anthropic's words for a missing field: `max_tokens: Field required`.
    return { status: 400, error: { type: 'invalid_request_error', message: errors.map((x) => `${toField(x.path) ?? 'body'}: ${x.message === 'is required' ? 'Field required' : x.message}`).join('; ') } };
  }
  const clientCode: ErrorCode | undefined = e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'payload_too_large'
    : e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 'unsupported_media_type'
    : e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || e instanceof SyntaxError ? 'malformed_json'
    : undefined;
  if (clientCode) {
    const { status, detail } = ERROR_CODES[clientCode];
    return { status, error: { type: typeFor(clientCode, status), message: detail } };
  }
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) return { status: 400, error: { type: 'invalid_request_error', message: e.message } };
  request.log.error({ err: error }, 'unhandled error');
  return { status: 500, error: { type: 'api_error', message: ERROR_CODES.internal_error.detail } };
}

/** The body of an error, as an HTTP answer and as a stream's `error` event. */
export const anthropicErrorBody = (request: FastifyRequest, error: AnthropicError) => ({ type: 'error' as const, error, request_id: request.id });

/** A routing failure (bad percent-encoding, an over-long parameter) under /anthropic, in Anthropic's error shape. */
export function sendAnthropicFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', request.id);
  reply.header('request-id', request.id);
  const { detail } = frameworkErrorDetail(error);
  return sendAnthropicError(request, reply, new AppError('validation_failed', detail));
}

export function sendAnthropicError(request: FastifyRequest, reply: FastifyReply, error: unknown) {
  const d = describeAnthropicError(request, error);
  // Also when the auth hook refused the request before this plugin's own hooks ran.
  reply.header('request-id', request.id);
  if (d.headers) reply.headers(d.headers);
  return reply.code(d.status).type('application/json; charset=utf-8').send(anthropicErrorBody(request, d.error));
}

/**
 * Scopes Anthropic's error shape to the plugin it is called in (the /anthropic routes): its routes' errors,
 * and 404 / 405 (with Allow) for paths under its prefix. Call it before the routes are added.
 */
export function registerAnthropicErrors(app: FastifyInstance) {
  const methods = new Map<string, string[]>();
  app.addHook('onRoute', (route) => {
    const list = ([] as string[]).concat(route.method).filter((m) => m !== 'HEAD');
    const url = route.url.replace(/\/+$/, '');
    methods.set(url, [...(methods.get(url) ?? []), ...list]);
  });
  app.setErrorHandler((error, request, reply) => sendAnthropicError(request, reply, error));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!.replace(/\/+$/, '');
    const allowed = methods.get(path);
    if (allowed?.length) {
      reply.header('allow', allowed.join(', '));
      return sendAnthropicError(request, reply, new AppError('method_not_allowed', `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}.`));
    }
    return sendAnthropicError(request, reply, new AppError('not_found', `No route ${request.method} ${path}.`));
  });
}
