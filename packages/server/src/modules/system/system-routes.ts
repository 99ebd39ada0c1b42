import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { renderErrorsPage } from './errors-page.js';
import { withTimeout } from '../../storage/dependency-errors.js';

const probe = { rateLimit: false } as const;
const READY_TIMEOUT_MS = 900;

export const systemRoutes = (ctx: AppContext): FastifyPluginAsync => async (app) => {
  app.get('/healthz', { config: probe, schema: { tags: ['Operations'], summary: 'The process is alive' } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: probe, schema: { tags: ['Operations'], summary: 'Storage (and Redis, when configured) answer' } }, async (request) => {
    const checks: Record<string, string> = {};
    // Both at once, each bounded, so the probe answers within a second whatever is down.
    const check = (work: () => Promise<unknown>, dep: 'database' | 'redis') => withTimeout(work(), READY_TIMEOUT_MS, dep).then(() => 'ok', () => 'unreachable');
    const [database, redis] = await Promise.all([check(() => ctx.store.handle.ping(), 'database'), ctx.redis ? check(() => ctx.redis!.ping(), 'redis') : undefined]);
    checks.database = database;
    if (redis) checks.redis = redis;
    const bad = Object.entries(checks).filter(([, v]) => v !== 'ok').map(([k]) => k);
    if (bad.length) {
      request.log.warn({ checks }, 'not ready');
      throw new AppError('service_unavailable', `Not ready: ${bad.join(' and ')} unreachable.`);
    }
    return { status: 'ready', checks };
  });

  app.get('/metrics', { config: probe, schema: { tags: ['Operations'], summary: 'Prometheus metrics' } }, async (_request, reply) => {
    reply.type(ctx.metrics.registry.contentType);
    return ctx.metrics.registry.metrics();
  });

  app.get('/.well-known/jwks.json', { config: probe, schema: { tags: ['Authentication'], summary: 'Public keys that verify access tokens' } }, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=300');
    return ctx.keyRing.publicJwks();
  });

  app.get('/docs/errors', { config: probe, schema: { hide: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(renderErrorsPage()));
};
