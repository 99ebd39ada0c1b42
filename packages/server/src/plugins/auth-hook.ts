import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CredentialResolver } from '../identity/credentials.js';
import { AppError, rateLimited } from '../errors.js';
import { RateLimiter } from '../limits/rate-limiter.js';
import type { WindowState } from '../limits/limit-store.js';
import type { Metrics } from './metrics.js';

function setRateHeaders(reply: FastifyReply, state: WindowState | undefined) {
  if (!state) return;
  reply.header('x-ratelimit-limit', state.limit);
  reply.header('x-ratelimit-remaining', state.remaining);
  reply.header('x-ratelimit-reset', state.resetAt);
}

export interface AuthHookDeps {
  credentials: CredentialResolver;
  rateLimiter: RateLimiter;
  metrics: Pick<Metrics, 'rateLimited'>;
}

/**
 * One hook, in a fixed order, for every request (unknown routes included):
 * identify the caller → count the request against its limits → enforce what
 * the route requires. Identification never fails the request by itself, so
 * a bad credential on a public route is counted per address, not refused.
 */
export function registerAuthHook(app: FastifyInstance, ctx: AuthHookDeps) {
  app.decorateRequest('principal', null);

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const config = request.routeOptions.config ?? {};
    let authError: unknown;
    try {
      const authorization = request.headers.authorization ?? (config.apiKeyHeader ? apiKeyAuthorization(request.headers['x-api-key']) : undefined);
      if (authorization) request.principal = await ctx.credentials.resolve(authorization, headerValue(request.headers['x-environment']));
    } catch (error) {
      authError = error;
    }
    const principal = request.principal;
    const subject = principal ? RateLimiter.subjectFor(principal.user.id, principal.environment) : `ip:${request.ip}`; // one budget per address, whatever X-Environment says
    const plan = principal ? principal.org.plan : 'free';
    if (config.rateLimit === false) {
      // Probes report the headers when they can, but never fail because Redis is down (/healthz touches nothing it needs).
      setRateHeaders(reply, await ctx.rateLimiter.peek(subject, plan).catch(() => undefined));
    } else {
      const admission = await ctx.rateLimiter.admit(subject, plan, RateLimiter.keyRequestWindows(principal));
      setRateHeaders(reply, admission.report);
      if (!admission.allowed) {
        ctx.metrics.rateLimited.inc({ plan });
        throw rateLimited(admission.refusedBy, admission.report!);
      }
    }
    const required = config.auth ?? 'none';
    if (required === 'none') return;
    if (!principal) throw authError ?? new AppError('unauthorized');
    if (config.sessionOnly && principal.type !== 'session') {
      throw new AppError('insufficient_scope', 'This route needs a session token from /api/v1/auth/login; API keys and OAuth tokens cannot use it.');
    }
    if (required !== 'any' && !principal.scopes.includes(required)) {
      throw new AppError('insufficient_scope', `This request needs the ${required} permission, which this credential does not have.`);
    }
  });
}

const headerValue = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** `x-api-key: <credential>` read as `Authorization: Bearer <credential>` (only on routes that opt in with `apiKeyHeader`). */
const apiKeyAuthorization = (v: string | string[] | undefined): string | undefined => {
  const key = headerValue(v)?.trim();
  return key ? `Bearer ${key}` : undefined;
};

