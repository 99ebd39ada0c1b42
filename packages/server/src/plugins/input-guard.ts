import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

const MAX_DEPTH = 64;

const escapeKey = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The JSON pointer of the first string (or key) holding a NUL character, or undefined. */
export function findNul(value: unknown, pointer = '', depth = 0): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? pointer || '/' : undefined;
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return undefined;
  // The pointer is spelled only on a hit: most requests have none, and most values are no containers.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'string' ? !item.includes('\u0000') : item === null || typeof item !== 'object') continue;
      const hit = findNul(item, `${pointer}/${i}`, depth + 1);
      if (hit) return hit;
    }
    return undefined;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (key.includes('\u0000')) return `${pointer}/${escapeKey(key)}`.replace(/\u0000/g, '\\u0000');
    const item: unknown = (value as Record<string, unknown>)[key];
    if (typeof item === 'string' ? !item.includes('\u0000') : item === null || typeof item !== 'object') continue;
    const hit = findNul(item, `${pointer}/${escapeKey(key)}`, depth + 1);
    if (hit) return hit;
  }
  return undefined;
}

/**
 * NUL (U+0000) is refused in every field of every route, prompts included:
 * PostgreSQL cannot store it in text, and no name, id or prompt needs it.
 * Runs before schema validation, so routes without a schema are covered too;
 * the error names the field as schema errors do (body: `/name`, others:
 * `params/id`, `querystring/client_id`).
 */
export function registerInputGuard(app: FastifyInstance) {
  app.addHook('preValidation', (request, _reply, done) => {
    const parts: Array<[string, unknown]> = [['params', request.params], ['querystring', request.query], ['body', request.body]];
    for (const [part, value] of parts) {
      const hit = findNul(value);
      if (!hit) continue;
      const path = part === 'body' ? hit : `${part}${hit === '/' ? '' : hit}`;
      return done(new AppError('validation_failed', `${path} must not contain NUL (U+0000).`, { errors: [{ path, message: 'must not contain NUL (U+0000)' }] }));
    }
    done();
  });
}
