import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { ERROR_CODES, ProblemSchema } from '@codeloom/protocol';
import { fixOpenApi } from './openapi-fixes.js';

const STATUS_WORDS = Object.fromEntries(Object.values(ERROR_CODES).map((e) => [e.status, e.title]));

/** Response entries for the problem documents a route can answer with. */
export function errorResponses(...statuses: number[]): Record<number, object> {
  return Object.fromEntries(statuses.map((s) => [s, { ...ProblemSchema, $id: undefined, description: `${STATUS_WORDS[s] ?? 'Error'} (application/problem+json)` }]));
}

/** What the 400 and 429 of a route that calls a model may say, beyond a schema failure (docs/api.md, Token budget). */
export const MODEL_CALL_ERRORS: Record<number, string> = {
  400: '`validation_failed` or `malformed_json` when the body fails the schema; `request_too_large` when the model call can never fit a token limit: '
    + 'what it may use (an upper bound of its prompt, its UTF-8 bytes, plus max_tokens or the model\'s output cap) is more than the whole figure of the plan\'s tokens per minute '
    + 'or of the API key\'s tokens_per_minute or monthly_tokens. Retrying will not help (no Retry-After): lower max_tokens or shorten the prompt.',
  429: '`rate_limited`: a request window, or a token window that has not that much left now (Retry-After says when it frees up).',
};

/** errorResponses for a route that calls a model: its 400 and 429 name the codes they carry (`request_too_large`, `rate_limited`). */
export function modelCallErrorResponses(...statuses: number[]): Record<number, object> {
  const responses = errorResponses(...statuses) as Record<number, { description: string }>;
  for (const s of statuses) if (MODEL_CALL_ERRORS[s]) responses[s] = { ...responses[s]!, description: `${responses[s]!.description}: ${MODEL_CALL_ERRORS[s]}` };
  return responses;
}

/** The server package's own version (src/plugins and dist/plugins both sit two folders below its package.json). */
export const SERVER_VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export async function registerOpenApi(app: FastifyInstance, serverUrl: string) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Codeloom API',
        version: SERVER_VERSION, // what /docs shows: the release, as in package.json
        description: [
          'Self-hosted code generation: accounts, API keys, rate limits, generation, streaming, projects, agents and workflows.',
          '',
          'Every route under `/api/v1/…` is also served at `/v1/…`. Errors are RFC 9457 problem documents (`application/problem+json`) with a stable `code`; see `/docs/errors`.',
          'Every response carries `X-Request-Id` and `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (Unix seconds) for the window closest to exhaustion; a 429 adds `Retry-After` (seconds).',
        ].join('\n'),
      },
      servers: [{ url: serverUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'A session access token (JWT), an API key (cl_live_… / cl_test_…) or an OAuth access token.' },
          anthropicApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The same credential as `bearer`, in Anthropic\'s header (only the /anthropic routes read it).' },
        },
      },
    },
    hideUntagged: false,
    // Problem documents as application/problem+json, streaming routes' text/event-stream, `{path}` for a wildcard (openapi-fixes.ts).
    transformObject: (documentObject) => fixOpenApi((documentObject as { openapiObject: Record<string, unknown> }).openapiObject),
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true, validatorUrl: null } as Record<string, unknown>, staticCSP: true });
  app.get('/openapi.json', { schema: { hide: true }, config: { rateLimit: false } }, async () => app.swagger());
}
