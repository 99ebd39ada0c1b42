import type { FastifyError, FastifyInstance } from 'fastify';
import type { ErrorCode } from '@codeloom/protocol';
import { AppError } from '../errors.js';
import { asDependencyError } from '../storage/dependency-errors.js';
import { sendProblem } from './problem.js';
import { toValidationErrors } from './validation.js';
import { isUnstorableText } from '../storage/storage-errors.js';

/** Fastify's own error codes, mapped onto ours. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'validation_failed',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'malformed_json',
  FST_ERR_BAD_URL: 'validation_failed',
  FST_ERR_ASYNC_CONSTRAINT: 'validation_failed',
};

export function registerErrorHandler(app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) {
      if (error.extra.headers) reply.headers(error.extra.headers);
      return sendProblem(request, reply, error.code, error.message, error.extra.errors, error.extra.upstreamCode);
    }
    if (error.validation) {
      return sendProblem(request, reply, 'validation_failed', `The ${error.validationContext ?? 'request'} does not match the schema.`, toValidationErrors(error.validation, error.validationContext));
    }
    const mapped = error.code ? FASTIFY_CODES[error.code] : undefined;
    if (mapped) {
      const detail = mapped === 'payload_too_large' ? `The body is over the limit of ${app.initialConfig.bodyLimit} bytes.`
        : mapped === 'unsupported_media_type' ? `Content-Type ${JSON.stringify(request.headers['content-type'] ?? '')} is not accepted here; send application/json.`
        : mapped === 'malformed_json' ? 'The request body is not valid JSON.'
        : error.message;
      return sendProblem(request, reply, mapped, detail);
    }
    if (isUnstorableText(error)) return sendProblem(request, reply, 'validation_failed', 'The request holds characters that cannot be stored.');
    if (error.statusCode === 400 && error instanceof SyntaxError) return sendProblem(request, reply, 'malformed_json');
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      request.log.info({ err: error }, 'client error');
      return sendProblem(request, reply, 'validation_failed', error.message);
    }
    const down = asDependencyError(error);
    if (down) {
      request.log.warn({ err: error }, 'dependency unavailable');
      reply.headers(down.extra.headers ?? {});
      return sendProblem(request, reply, down.code, down.message);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(request, reply, 'internal_error');
  });
}
