import type { FastifyPluginAsync } from 'fastify';
import type { Redis } from 'ioredis';
import type { DatabaseHandle } from '../../storage/open-database.js';
import type { Metrics } from '../../plugins/metrics.js';
import type { KeyRing } from '../auth/key-ring.js';
import { AppError } from '../../errors.js';
import { renderErrorsPage } from './errors-page.js';
import { withTimeout } from '../../storage/dependency-errors.js';

const probe = { rateLimit: false } as const;
const READY_TIMEOUT_MS = 900;

export interface SystemDeps {
  database: DatabaseHandle;
  redis?: Redis | undefined;
  metrics: Metrics;
  keyRing: KeyRing;
}

export const systemRoutes = ({ database, redis, metrics, keyRing }: SystemDeps): FastifyPluginAsync => async (app) => {
  app.get('/healthz', { config: probe, schema: { tags: ['Operations'], summary: 'The process is alive' } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: probe, schema: { tags: ['Operations'], summary: 'Storage (and Redis, when configured) answer' } }, async (request) => {
    const checks: Record<string, string> = {};
    // Both at once, each bounded, so the probe answers within a second whatever is down.
    const check = (work: () => Promise<unknown>, dep: 'database' | 'redis') => withTimeout(work(), READY_TIMEOUT_MS, dep).then(() => 'ok', () => 'unreachable');
    const [databaseCheck, redisCheck] = await Promise.all([check(() => database.ping(), 'database'), redis ? check(() => redis.ping(), 'redis') : undefined]);
    checks.database = databaseCheck;
    if (redisCheck) checks.redis = redisCheck;
    const bad = Object.entries(checks).filter(([, v]) => v !== 'ok').map(([k]) => k);
    if (bad.length) {
      request.log.warn({ checks }, 'not ready');
      throw new AppError('service_unavailable', `Not ready: ${bad.join(' and ')} unreachable.`);
    }
    return { status: 'ready', checks };
  });

  app.get('/metrics', { config: probe, schema: { tags: ['Operations'], summary: 'Prometheus metrics', description: 'With CODELOOM_METRICS_TOKEN set, needs `Authorization: Bearer <that token>` (else 401).' } }, async (request, reply) => {
    if (!metrics.authorized(request.headers.authorization)) {
      throw new AppError('unauthorized', 'GET /metrics needs Authorization: Bearer <CODELOOM_METRICS_TOKEN>.', { headers: { 'www-authenticate': 'Bearer realm="metrics"' } });
    }
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });

  app.get('/.well-known/jwks.json', { config: probe, schema: { tags: ['Authentication'], summary: 'Public keys that verify access tokens' } }, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=300');
    return keyRing.publicJwks();
  });

  app.get('/docs/errors', { config: probe, schema: { hide: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(renderErrorsPage()));
};
