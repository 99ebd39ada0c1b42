import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export type RequestLogMode = 'all' | 'sampled' | 'errors' | 'off';

export interface RequestLogSettings {
  mode: RequestLogMode;
  /** `sampled`: one request in this many. */
  sampleEvery: number;
}

/**
 * One `request completed` line per logged request, instead of Fastify's two lines on every request (a
 * synchronous write each, the costliest part of a cheap request). Which requests: see CODELOOM_REQUEST_LOG.
 * A 5xx answer is logged in every mode but `off`, at warn. The line names the path without its query string
 * (queries may carry codes or tokens) and the route pattern; the reqId comes from the request's logger.
 */
export function registerRequestLog(app: FastifyInstance, settings: RequestLogSettings): void {
  const { mode } = settings;
  if (mode === 'off') return;
  const every = Math.max(1, Math.floor(settings.sampleEvery));
  let seen = 0;
  const wanted = (status: number): boolean => {
    if (status >= 500 || mode === 'all') return true;
    if (mode !== 'sampled') return false;
    seen = seen + 1 >= every ? 0 : seen + 1;
    return seen === 0;
  };
  app.addHook('onResponse', (request, reply, done) => {
    if (wanted(reply.statusCode)) write(request, reply);
    done();
  });
}

function write(request: FastifyRequest, reply: FastifyReply): void {
  const url = request.url;
  const q = url.indexOf('?');
  // Flat fields: pino's `req`/`res` serializers would pick their own fields out of nested ones.
  const line = {
    method: request.method, url: q < 0 ? url : url.slice(0, q), route: request.routeOptions.url ?? null,
    statusCode: reply.statusCode, responseTime: Math.round(reply.elapsedTime * 1000) / 1000,
  };
  if (reply.statusCode >= 500) request.log.warn(line, 'request completed');
  else request.log.info(line, 'request completed');
}
