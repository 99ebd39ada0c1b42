import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES, problemTypeFor, type ErrorCode } from '@codeloom/protocol';
import { AppError } from '../errors.js';
import { sendProblem } from './problem.js';
import { requestIdFrom } from './request-id.js';

/**
 * Errors Fastify raises before a route is found (bad percent-encoding, a
 * path parameter over the router's length limit): answered as problem
 * documents with X-Request-Id like every other error (Fastify's
 * `frameworkErrors` option).
 */
/** What a routing failure means: its detail and the part of the request at fault. */
export function frameworkErrorDetail(error: FastifyError): { detail: string; errors?: Array<{ path: string; message: string }> } {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return { detail: 'A path parameter is too long.', errors: [{ path: 'params', message: 'is too long' }] };
  if (error.code === 'FST_ERR_BAD_URL') return { detail: 'The URL is not validly percent-encoded UTF-8.', errors: [{ path: 'url', message: 'is not validly percent-encoded' }] };
  return { detail: 'The request could not be routed.' };
}

export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', request.id);
  const { detail, errors } = frameworkErrorDetail(error);
  return sendProblem(request, reply, 'validation_failed', detail, errors);
}

function clientErrorCode(err: NodeJS.ErrnoException): ErrorCode {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  if (err.code === 'HPE_HEADER_OVERFLOW') return 'headers_too_large';
  return 'validation_failed';
}

const CLIENT_ERROR_DETAIL: Partial<Record<ErrorCode, string>> = {
  request_timeout: 'The request was not received in time.',
  headers_too_large: 'The request headers are over the size limit.',
  validation_failed: 'The request is not well-formed HTTP/1.1.',
};

/**
 * Requests Node's HTTP parser refuses (bare LF, obs-fold, Content-Length with
 * Transfer-Encoding, an unknown method, …) never reach Fastify: the answer is
 * written on the socket as a problem document, then the connection closes.
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const code = clientErrorCode(err);
  const requestId = writeRawProblem(socket, code, CLIENT_ERROR_DETAIL[code]);
  this.log.debug({ err, requestId }, 'client error');
  closeSoon(socket);
}

/** The answer was handed to end(), which flushes then closes; a peer that never reads is cut off shortly after. */
function closeSoon(socket: Duplex) {
  socket.on('error', () => {});
  setTimeout(() => socket.destroy(), 1_000).unref();
}

/** Writes a problem document as a whole HTTP/1.1 response on a socket Fastify does not answer on, and ends it; returns the request id. */
export function writeRawProblem(socket: Duplex, code: ErrorCode, detail?: string, headers: Record<string, string> = {}): string {
  const entry = ERROR_CODES[code];
  const requestId = requestIdFrom(undefined);
  const body = JSON.stringify({ type: problemTypeFor(code), title: entry.title, status: entry.status, code, detail: detail ?? entry.detail, request_id: requestId });
  if (socket.writable) {
    const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    socket.end(`HTTP/1.1 ${entry.status} ${STATUS_CODES[entry.status] ?? entry.title}\r\n`
      + `Content-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`
      + `X-Request-Id: ${requestId}\r\n${extra}Connection: close\r\n\r\n${body}`);
  }
  return requestId;
}

/** CONNECT (a proxy request) never reaches Fastify; without a listener Node would drop the connection without a word. */
export function refuseConnectMethod(app: FastifyInstance) {
  app.server.on('connect', (_req: unknown, socket: Duplex) => {
    writeRawProblem(socket, 'method_not_allowed', 'CONNECT is not supported: Codeloom is not a proxy.');
    closeSoon(socket);
  });
}

/** HTTP/1.1 requires Host (RFC 9112 §3.2); Node's own refusal is an empty 400, so the check is made here instead. */
export function registerHostCheck(app: FastifyInstance) {
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      return done(new AppError('validation_failed', 'HTTP/1.1 requests must carry a Host header.', { errors: [{ path: 'headers/host', message: 'is required' }] }));
    }
    done();
  });
}
