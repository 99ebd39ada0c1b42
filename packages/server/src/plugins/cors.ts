import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/** Where cross-origin callers are answered (CONTRACT §12.3): the APIs and the OAuth endpoints a browser client calls. */
const CORS_PATHS = /^\/(?:api\/v1|v1|openai|anthropic|\.well-known)(?:[/?]|$)|^\/oauth\/(?:token|revoke|introspect)(?:[/?]|$)/;
/** Request headers a browser client may send: credentials, JSON, the vendors' own, resuming, tracing. */
const ALLOWED_HEADERS = ['authorization', 'content-type', 'x-api-key', 'anthropic-version', 'anthropic-beta', 'anthropic-dangerous-direct-browser-access', 'openai-beta', 'openai-organization', 'openai-project', 'x-stainless-arch', 'x-stainless-lang', 'x-stainless-os', 'x-stainless-package-version', 'x-stainless-retry-count', 'x-stainless-runtime', 'x-stainless-runtime-version', 'x-stainless-timeout', 'x-request-id', 'x-organization', 'last-event-id', 'idempotency-key', 'traceparent', 'tracestate'];
/** Response headers browser code may read: the limits, Retry-After, the request id. */
const EXPOSED_HEADERS = ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-request-id', 'request-id', 'x-should-retry', 'server-timing', 'location'];

/**
 * CORS for the listed origins on the API routes only, never with credentials (no cookies cross origins: a
 * browser client sends its bearer token). A preflight from an allowed origin is 204; any other origin gets
 * no CORS headers, so the browser refuses the call. Nothing is registered without origins: no cost per request.
 */
export async function registerCors(app: FastifyInstance, origins: readonly string[]): Promise<void> {
  if (!origins.length) return;
  const any = origins.includes('*');
  const allowed = new Set(origins.map((o) => o.replace(/\/$/, '')));
  await app.register(cors, {
    delegator: (request, callback) => {
      const origin = request.headers.origin;
      const path = request.raw.url ?? request.url;
      if (!origin || !CORS_PATHS.test(path) || !(any || allowed.has(origin))) return callback(null, { origin: false });
      callback(null, {
        origin: any ? '*' : origin,
        credentials: false,
        methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
        allowedHeaders: ALLOWED_HEADERS,
        exposedHeaders: EXPOSED_HEADERS,
        maxAge: 600,
        strictPreflight: false,
        optionsSuccessStatus: 204,
      });
    },
  });
}
