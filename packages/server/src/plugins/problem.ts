import type { FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES, problemTypeFor, type ErrorCode, type ProblemDocument } from '@codeloom/protocol';

export function buildProblem(
  request: FastifyRequest,
  code: ErrorCode,
  detail?: string,
  errors?: Array<{ path: string; message: string }>,
  upstreamCode?: string,
): ProblemDocument {
  const entry = ERROR_CODES[code];
  return {
    type: problemTypeFor(code),
    title: entry.title,
    status: entry.status,
    code,
    detail: detail ?? entry.detail,
    request_id: request.id,
    ...(errors ? { errors } : {}),
    ...(upstreamCode ? { upstream_code: upstreamCode } : {}),
  };
}

export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  detail?: string,
  errors?: Array<{ path: string; message: string }>,
  upstreamCode?: string,
) {
  const doc = buildProblem(request, code, detail, errors, upstreamCode);
  return reply.code(doc.status).type('application/problem+json; charset=utf-8').send(doc);
}
