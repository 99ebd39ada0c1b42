import type { FastifyInstance, HTTPMethods } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { AppError } from '../errors.js';

const METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * Unknown routes are 404 problems; a known path with the wrong method is a
 * 405 with Allow. A shadow router of every registered path answers which.
 */
export function registerNotFound(app: FastifyInstance) {
  const shadow = FindMyWay({ ignoreTrailingSlash: true });
  app.addHook('onRoute', (route) => {
    const methods = ([] as string[]).concat(route.method).filter((m) => METHODS.includes(m as HTTPMethods));
    for (const m of methods) {
      try { shadow.on(m as HTTPMethod, route.url, () => {}); } catch { /* duplicate shapes are fine */ }
    }
  });
  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = METHODS.filter((m) => m !== request.method && shadow.find(m as HTTPMethod, path));
    if (allowed.length) {
      if (allowed.includes('GET')) allowed.push('HEAD');
      reply.header('allow', allowed.join(', '));
      throw new AppError('method_not_allowed', `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}.`);
    }
    throw new AppError('not_found', `No route ${request.method} ${path}.`);
  });
}
