import fc from 'fast-check';
import { NO_CONTROL_CHARS } from '@codeloom/protocol';
import { encodePart, hostileJson, hostileString, rawPathSegment, rawQueryValue } from './hostile-values.js';

type Schema = Record<string, any>;

/** One operation of the OpenAPI document, reduced to what the fuzzer needs. */
export interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  query: Array<{ name: string; schema: Schema }>;
  body?: { types: string[]; schema: Schema };
  secured: boolean;
}

/** Who a request is sent as: account A's session or key, nobody, or a forged credential. */
export type Credential = 'session' | 'key' | 'none' | 'garbage';

export interface FuzzRequest {
  method: string;
  route: string;
  url: string;
  credential: Credential;
  garbage?: string;
  headers: Record<string, string>;
  body?: string;
}

/** The values the fuzzer mixes in: real ids of both accounts, and what valid bodies refer to. */
export interface Pools {
  ids: string[];
  emails: string[];
  templates: string[];
  models: string[];
  languages: string[];
}

export function operationsOf(doc: Schema): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<Schema>(doc.paths)) {
    for (const [method, op] of Object.entries<Schema>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const params: Schema[] = op.parameters ?? [];
      const content: Schema | undefined = op.requestBody?.content;
      ops.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        body: content ? { types: Object.keys(content), schema: resolve(doc, content[Object.keys(content)[0]!].schema) } : undefined,
        secured: Array.isArray(op.security) && op.security.length > 0,
      });
    }
  }
  return ops;
}

function resolve(doc: Schema, schema: Schema): Schema {
  if (schema?.$ref) {
    const name = String(schema.$ref).split('/').pop()!;
    return resolve(doc, doc.components?.schemas?.[name] ?? {});
  }
  return schema ?? {};
}

const HINTS: Record<string, (p: Pools) => fc.Arbitrary<unknown>> = {
  email: (p) => fc.oneof(fc.constantFrom(...p.emails), fc.emailAddress()),
  template: (p) => fc.constantFrom(...p.templates),
  model: (p) => fc.constantFrom(...p.models),
  language: (p) => fc.constantFrom(...p.languages),
  project_id: (p) => fc.constantFrom(...p.ids),
  client_id: (p) => fc.constantFrom(...p.ids),
  redirect_uris: () => fc.array(fc.constantFrom('https://app.example/cb', 'http://127.0.0.1:9/cb', 'com.example.app:/cb'), { minLength: 1, maxLength: 3 }),
  redirect_uri: () => fc.constantFrom('https://app.example/cb', 'http://127.0.0.1:9/cb'),
  expires_at: () => fc.constantFrom(new Date(Date.now() + 86_400_000).toISOString(), '2000-01-01T00:00:00Z', 'not a date'),
};

/** A value the schema accepts (mostly: boundaries are included, one past them too). */
export function validValue(schema: Schema, pools: Pools, key?: string, depth = 0): fc.Arbitrary<unknown> {
  if (key && HINTS[key]) return HINTS[key](pools);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches)) return fc.oneof(...branches.map((b: Schema) => validValue(b, pools, undefined, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': {
      if (schema.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
      const min = schema.minLength ?? 0;
      const max = Math.min(schema.maxLength ?? 60, min + 60);
      const unit = schema.pattern === NO_CONTROL_CHARS ? 'grapheme' : 'binary';
      const boundary = schema.maxLength !== undefined ? [fc.constant('x'.repeat(schema.maxLength)), fc.constant('x'.repeat(schema.maxLength + 1))] : [];
      return fc.oneof({ weight: 6, arbitrary: fc.string({ unit, minLength: Math.max(min, 1), maxLength: Math.max(max, 1) }) }, ...boundary);
    }
    case 'integer': {
      const min = schema.minimum ?? -1_000;
      const max = schema.maximum ?? 1_000_000;
      return fc.oneof({ weight: 4, arbitrary: fc.integer({ min, max }) }, fc.constantFrom(min, max, min - 1, max + 1));
    }
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      if (depth > 4) return fc.constant([]);
      const items = validValue(schema.items ?? {}, pools, key, depth + 1);
      return fc.array(items, { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, 4) });
    }
    case 'object':
      return validObject(schema, pools, depth);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function validObject(schema: Schema, pools: Pools, depth: number, hostility = 0): fc.Arbitrary<Record<string, unknown>> {
  if (depth > 4) return fc.constant({});
  const required = new Set<string>(schema.required ?? []);
  const props = Object.entries<Schema>(schema.properties ?? {});
  const field = (name: string, s: Schema) => hostility > 0
    ? fc.oneof({ weight: 10 - hostility, arbitrary: validValue(s, pools, name, depth + 1) }, { weight: hostility, arbitrary: hostileJson })
    : validValue(s, pools, name, depth + 1);
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, s] of props) record[name] = field(name, s);
  const requiredKeys = props.map(([n]) => n).filter((n) => required.has(n));
  return fc.record(record, { requiredKeys });
}

/** A body for the operation: valid, valid with hostile fields, missing or extra fields, the wrong type, or not JSON at all. */
function bodyFor(op: Operation, pools: Pools): fc.Arbitrary<{ type?: string; text?: string }> {
  const schema = op.body?.schema ?? { type: 'object', properties: {} };
  const json = (v: unknown) => ({ type: 'application/json', text: JSON.stringify(v) });
  const withExtra = validObject(schema, pools, 0).chain((o) => fc.tuple(hostileString, hostileJson).map(([k, v]) => ({ ...o, [k]: v })));
  const withoutOne = validObject(schema, pools, 0).chain((o) => {
    const keys = Object.keys(o);
    return keys.length ? fc.constantFrom(...keys).map((k) => { const c = { ...o }; delete c[k]; return c; }) : fc.constant(o);
  });
  const form = validObject(schema, pools, 0, 3).map((o) => ({
    type: 'application/x-www-form-urlencoded',
    text: new URLSearchParams(Object.entries(o).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v) ?? ''])).toString(),
  }));
  const raw = fc.oneof(
    fc.constantFrom('{', '{"a":', 'nul', '[1,]', '\u0000', '{"__proto__":{"x":1}}', '"\\ud800"', '{"a":"\\u0000"}', '1e999999', '[' .repeat(5000)),
    fc.string({ unit: 'binary', maxLength: 50 }),
  ).map((text) => ({ type: 'application/json', text }));
  const otherType = fc.tuple(fc.constantFrom('text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16', ''), fc.string({ maxLength: 20 }))
    .map(([type, text]) => ({ type, text }));
  const arbs = [
    { weight: 5, arbitrary: validObject(schema, pools, 0).map(json) },
    { weight: 5, arbitrary: validObject(schema, pools, 0, 3).map(json) },
    { weight: 1, arbitrary: withExtra.map(json) },
    { weight: 1, arbitrary: withoutOne.map(json) },
    { weight: 2, arbitrary: hostileJson.map(json) },
    { weight: 1, arbitrary: raw },
    { weight: 1, arbitrary: otherType },
    { weight: 1, arbitrary: fc.constant({}) },
  ];
  if (op.body?.types.includes('application/x-www-form-urlencoded')) arbs.push({ weight: 6, arbitrary: form });
  return fc.oneof(...arbs);
}

function pathValue(name: string, pools: Pools): fc.Arbitrary<string> {
  const ids = fc.constantFrom(...pools.ids).map(encodePart);
  if (name === '*') {
    return fc.oneof(fc.constantFrom('README.md', 'src/index.ts', 'package.json', 'a/b/../../c', '%2e%2e/%2e%2e/etc/passwd'), hostileString.map(encodePart), rawPathSegment);
  }
  return fc.oneof({ weight: 5, arbitrary: ids }, { weight: 2, arbitrary: hostileString.map(encodePart) }, { weight: 2, arbitrary: rawPathSegment });
}

const EXTRA_QUERY = ['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'page', 'limit', 'x'];

function queryFor(op: Operation, pools: Pools): fc.Arbitrary<string> {
  const names = op.query.length ? op.query : EXTRA_QUERY.map((name) => ({ name, schema: { type: 'string' } as Schema }));
  const pair = fc.constantFrom(...names).chain(({ name, schema }) => fc.oneof(
    { weight: 4, arbitrary: validValue(schema, pools, name).map((v) => `${encodePart(name)}=${encodePart(String(v))}`) },
    { weight: 2, arbitrary: rawQueryValue.map((v) => `${name}=${v}`) },
    { weight: 2, arbitrary: hostileString.map((v) => `${name}=${encodePart(v)}`) },
  ));
  return fc.array(pair, { maxLength: 4 }).map((pairs) => (pairs.length ? `?${pairs.join('&')}` : ''));
}

const GARBAGE_CREDENTIALS = [
  'Bearer ', 'Bearer x', 'Bearer cl_live_0000000000000000000000000000000000', 'Bearer cl_test_', 'Bearer clo_at_x', 'Basic Zm9vOmJhcg==',
  'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1c3JfeCJ9.', 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.AAAA', 'bearer', `Bearer ${'a'.repeat(5000)}`, 'Token abc',
];

/** Arbitrary requests for one operation. */
export function requestFor(op: Operation, pools: Pools): fc.Arbitrary<FuzzRequest> {
  // Logging out or refreshing with A's own session would end it for the rest of the run.
  const sessionSafe = !/logout|refresh/.test(op.path);
  const credential: fc.Arbitrary<Credential> = sessionSafe
    ? fc.constantFrom<Credential>('session', 'session', 'session', 'session', 'key', 'key', 'none', 'garbage')
    : fc.constantFrom<Credential>('none', 'garbage');
  const pathArb = op.pathParams.length
    ? fc.tuple(...op.pathParams.map((n) => pathValue(n, pools))).map((values) => {
      let p = op.path;
      op.pathParams.forEach((n, i) => { p = p.replace(`{${n}}`, values[i]!); });
      return p;
    })
    : fc.constant(op.path);
  const prefix = op.path.startsWith('/api/v1/') ? fc.constantFrom('', '', '', '/v1-alias') : fc.constant('');
  const extraHeaders = fc.record({
    'x-environment': fc.constantFrom('production', 'sandbox', 'staging', ''),
    'x-request-id': fc.constantFrom('fuzz-1', 'x'.repeat(200), 'a b', '../'),
    accept: fc.constantFrom('application/json', 'text/html', '*/*', 'application/problem+json'),
  }, { requiredKeys: [] });
  const bodyArb = op.body || op.method !== 'GET' ? bodyFor(op, pools) : fc.constant({});
  return fc.record({
    path: pathArb, prefix, query: queryFor(op, pools), credential, garbage: fc.constantFrom(...GARBAGE_CREDENTIALS), headers: extraHeaders, body: bodyArb,
  }).map(({ path, prefix: alias, query, credential: cred, garbage, headers, body }) => ({
    method: op.method,
    route: `${op.method} ${op.path}`,
    url: `${alias ? path.replace(/^\/api\/v1\//, '/v1/') : path}${query}`,
    credential: cred,
    ...(cred === 'garbage' ? { garbage } : {}),
    headers: { ...headers, ...(body.type ? { 'content-type': body.type } : {}) },
    ...(body.text !== undefined ? { body: body.text } : {}),
  }));
}
