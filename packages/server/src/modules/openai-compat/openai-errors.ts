import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES, type ErrorCode } from '@codeloom/protocol';
import { AppError, ProviderError } from '../../errors.js';
import { toValidationErrors } from '../../plugins/validation.js';
import { frameworkErrorDetail } from '../../plugins/protocol-errors.js';

/** OpenAI's error object: what the `openai` SDKs, editors and gateways parse. */
export interface OpenAIError { message: string; type: string; param: string | null; code: string | null }

/** OpenAI's `type` for a status (the SDKs choose their error class by status; some tools read `type`). */
function typeFor(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return status === 503 ? 'service_unavailable_error' : 'api_error';
  return 'invalid_request_error';
}

/** `/messages/0/content` → `messages[0].content`, as OpenAI names a parameter. */
export function toParam(pointer: string | undefined): string | null {
  if (!pointer || pointer === '/') return null;
  const parts = pointer.replace(/^(body|querystring|params|headers)\/?/, '').split('/').filter(Boolean);
  return parts.reduce((out, p) => (/^\d+$/.test(p) ? `${out}[${p}]` : out ? `${out}.${p}` : p), '') || null;
}

export interface DescribedError { status: number; error: OpenAIError; headers?: Record<string, string> | undefined }

/** Any failure as OpenAI's shape, with our stable code in `code` and the status the registry gives it. */
export function describeOpenAIError(request: FastifyRequest, error: unknown): DescribedError {
  if (error instanceof AppError) {
    const status = ERROR_CODES[error.code].status;
    // A provider's refusal keeps its own code and param (`context_length_exceeded`, `messages`): clients act on them.
    if (error instanceof ProviderError && error.kind === 'upstream_rejected') {
      return { status, headers: error.extra.headers, error: { message: error.message, type: 'invalid_request_error', param: error.upstream.param ?? null, code: error.upstream.code ?? error.code } };
    }
    return { status, headers: error.extra.headers, error: { message: error.message, type: typeFor(status), param: toParam(error.extra.errors?.[0]?.path), code: error.code } };
  }
  const e = error as FastifyError;
  if (e.validation) {
    // One message per parameter: a nullable field's "must be null" branch says nothing useful.
    const errors = toValidationErrors(e.validation, e.validationContext).filter((x, i, all) => all.findIndex((y) => y.path === x.path) === i);
    const message = errors.map((x) => `${toParam(x.path) ?? 'body'} ${x.message}`).join('; ');
    return { status: 400, error: { message: `Invalid request: ${message}.`, type: 'invalid_request_error', param: toParam(errors[0]?.path), code: 'validation_failed' } };
  }
  const clientCode: ErrorCode | undefined = e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'payload_too_large'
    : e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 'unsupported_media_type'
    : e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || e instanceof SyntaxError ? 'malformed_json'
    : undefined;
  if (clientCode) {
    const { status, detail } = ERROR_CODES[clientCode];
    return { status, error: { message: detail, type: typeFor(status), param: null, code: clientCode } };
  }
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) return { status: 400, error: { message: e.message, type: 'invalid_request_error', param: null, code: 'validation_failed' } };
  request.log.error({ err: error }, 'unhandled error');
  return { status: 500, error: { message: ERROR_CODES.internal_error.detail, type: 'api_error', param: null, code: 'internal_error' } };
}

/** A routing failure (bad percent-encoding, an over-long parameter) under /openai/v1, in OpenAI's error shape. */
export function sendOpenAIFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', request.id);
  const { detail, errors } = frameworkErrorDetail(error);
  return sendOpenAIError(request, reply, new AppError('validation_failed', detail, errors ? { errors } : {}));
}

export function sendOpenAIError(request: FastifyRequest, reply: FastifyReply, error: unknown) {
  const d = describeOpenAIError(request, error);
  if (d.headers) reply.headers(d.headers);
  return reply.code(d.status).type('application/json; charset=utf-8').send({ error: d.error });
}

/**
 * Scopes OpenAI's error shape to the plugin it is called in (the /openai/v1 routes): its routes' errors,
 * and 404 / 405 (with Allow) for paths under its prefix. Call it before the routes are added.
 */
export function registerOpenAIErrors(app: FastifyInstance) {
  const methods = new Map<string, string[]>();
  app.addHook('onRoute', (route) => {
    const list = ([] as string[]).concat(route.method).filter((m) => m !== 'HEAD');
    methods.set(route.url.replace(/\/+$/, ''), [...(methods.get(route.url) ?? []), ...list]);
  });
  app.setErrorHandler((error, request, reply) => sendOpenAIError(request, reply, error));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!.replace(/\/+$/, '');
    const allowed = methods.get(path);
    if (allowed?.length) {
      reply.header('allow', allowed.join(', '));
      return sendOpenAIError(request, reply, new AppError('method_not_allowed', `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}.`));
    }
    return sendOpenAIError(request, reply, new AppError('not_found', `No route ${request.method} ${path}.`));
  });
}
