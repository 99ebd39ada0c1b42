import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import { NO_CONTROL_CHARS } from '@codeloom/protocol';

/**
 * Bodies are validated strictly (a string is never coerced into a number),
 * query strings and path params with coercion because they arrive as text.
 */
function makeAjv(coerce: boolean) {
  const ajv = new Ajv.default({ allErrors: true, verbose: true, coerceTypes: coerce, useDefaults: true, removeAdditional: false, strict: false });
  addFormats.default(ajv);
  return ajv;
}
const strictAjv = makeAjv(false);
const coercingAjv = makeAjv(true);

export function validatorCompiler({ schema, httpPart }: { schema: object; httpPart?: string }) {
  const ajv = httpPart === 'body' ? strictAjv : coercingAjv;
  return ajv.compile(schema);
}

function pointerFor(e: FastifySchemaValidationError | ErrorObject): string {
  const base = e.instancePath ?? '';
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'required' && typeof params.missingProperty === 'string') return `${base}/${params.missingProperty}`;
  if (e.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') return `${base}/${params.additionalProperty}`;
  return base || '/';
}

export function toValidationErrors(errors: FastifySchemaValidationError[], context?: string) {
  const seen = new Set<string>();
  const out: Array<{ path: string; message: string }> = [];
  for (const e of errors) {
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf') continue; // the branch errors say it better
    const path = pointerFor(e);
    const params = e.params as Record<string, unknown>;
    const custom = (e as { parentSchema?: { errorMessage?: unknown } }).parentSchema?.errorMessage;
    const message = typeof custom === 'string' && e.keyword !== 'required' ? custom
      : e.keyword === 'enum' && Array.isArray(params.allowedValues) ? `must be one of: ${params.allowedValues.join(', ')}`
      : e.keyword === 'const' && 'allowedValue' in params ? `must be ${JSON.stringify(params.allowedValue)}`
      : e.keyword === 'pattern' && params.pattern === NO_CONTROL_CHARS ? 'must not contain control characters'
      : e.keyword === 'additionalProperties' ? 'is not a known field'
      : e.keyword === 'required' ? 'is required'
      : (e.message ?? 'is invalid');
    const key = `${path} ${message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push({ path: context && context !== 'body' ? `${context}${path === '/' ? '' : path}` : path, message });
    }
  }
  return out.length ? out : [{ path: '/', message: 'is invalid' }];
}
