/**
 * A minimal document valid against a JSON schema, deterministically: what the sandbox model (a
 * deterministic template model, not AI) writes as a tool call's arguments or as structured output.
 * Required properties only (more when minProperties asks), the first enum value or the const, strings
 * of at least minLength (named after their property), the smallest number the bounds allow, minItems
 * items (distinct when uniqueItems), the first branch of anyOf/oneOf that yields a valid-looking value,
 * allOf merged, local $refs (#/$defs/…, #/definitions/…) followed. Patterns are met by trying a few
 * candidate strings; a pattern none of them matches is the one thing it may not satisfy.
 */
export type Schema = Record<string, unknown> | boolean;

const FORMATS: Record<string, string> = {
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  time: '00:00:00Z',
  email: 'sandbox@example.com',
  'idn-email': 'sandbox@example.com',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  uri: 'https://example.com/',
  'uri-reference': 'https://example.com/',
  iri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
  duration: 'P1D',
  'json-pointer': '/sandbox',
  regex: '.*',
};

const MAX_DEPTH = 32;

interface Ctx {
  root: Record<string, unknown>;
  depth: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function resolveRef(ref: string, ctx: Ctx): Schema {
  if (!ref.startsWith('#')) return {};
  const path = ref.slice(1).split('/').filter(Boolean).map((p) => decodeURIComponent(p.replace(/~1/g, '/').replace(/~0/g, '~')));
  let node: unknown = ctx.root;
  for (const p of path) node = isObject(node) ? node[p] : undefined;
  return isObject(node) || typeof node === 'boolean' ? node : {};
}

/** allOf folded into one schema: properties and required merged, the rest of the first schema that sets a keyword. */
function merged(schema: Record<string, unknown>, ctx: Ctx): Record<string, unknown> {
  let out: Record<string, unknown> = { ...schema };
  if (typeof out.$ref === 'string') {
    const target = resolveRef(out.$ref, ctx);
    delete out.$ref;
    out = { ...(isObject(target) ? merged(target, { ...ctx, depth: ctx.depth + 1 }) : {}), ...out };
  }
  if (Array.isArray(out.allOf)) {
    const parts = out.allOf as Schema[];
    delete out.allOf;
    for (const part of parts) {
      if (!isObject(part)) continue;
      const p = merged(part, { ...ctx, depth: ctx.depth + 1 });
      const properties = { ...(isObject(p.properties) ? p.properties : {}), ...(isObject(out.properties) ? out.properties : {}) };
      const required = [...new Set([...(Array.isArray(out.required) ? out.required : []), ...(Array.isArray(p.required) ? p.required : [])])];
      out = { ...p, ...out, properties, required };
    }
  }
  return out;
}

function typeOf(schema: Record<string, unknown>): string | undefined {
  const t = schema.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return (t.find((x) => x !== 'null') ?? t[0]) as string | undefined;
  if (schema.properties !== undefined || schema.required !== undefined || schema.additionalProperties !== undefined) return 'object';
  if (schema.items !== undefined || schema.prefixItems !== undefined) return 'array';
  if (schema.minLength !== undefined || schema.pattern !== undefined || schema.format !== undefined) return 'string';
  if (schema.minimum !== undefined || schema.maximum !== undefined || schema.multipleOf !== undefined) return 'number';
  return undefined;
}

function stringFor(schema: Record<string, unknown>, name: string, variant: number): string {
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
  const base = (name.replace(/[^\w-]/g, '') || 'sandbox') + (variant > 0 ? `-${variant}` : '');
  const fit = (s: string) => {
    let out = s;
    while (out.length < min) out += 'x';
    return out.length > max ? out.slice(0, max) : out;
  };
  if (typeof schema.pattern === 'string') {
    let re: RegExp | undefined;
    try { re = new RegExp(schema.pattern, 'u'); } catch { re = undefined; }
    if (re) {
      const candidates = [format, base, fit(base), 'sandbox', 'a', 'A', '0', 'a0', 'A0', 'abc', 'ABC', '123', 'sandbox_1', 'sandbox-1', 'x@example.com', 'https://example.com/', '2026-01-01', ''];
      for (const c of candidates) {
        if (c !== undefined && re.test(c) && c.length >= min && c.length <= max) return variant > 0 && re.test(`${c}${variant}`) ? `${c}${variant}` : c;
      }
    }
  }
  return format !== undefined && format.length >= min && format.length <= max ? format : fit(base);
}

function numberFor(schema: Record<string, unknown>, integer: boolean, variant: number): number {
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  let lo = num(schema.minimum);
  const exLo = num(schema.exclusiveMinimum) ?? (schema.exclusiveMinimum === true ? lo : undefined);
  let hi = num(schema.maximum);
  const exHi = num(schema.exclusiveMaximum) ?? (schema.exclusiveMaximum === true ? hi : undefined);
  const step = num(schema.multipleOf) ?? (integer ? 1 : undefined);
  if (exLo !== undefined) lo = step ? exLo + step : integer ? Math.floor(exLo) + 1 : exLo + Math.min(1, hi !== undefined || exHi !== undefined ? ((exHi ?? hi)! - exLo) / 2 : 1);
  if (exHi !== undefined && schema.exclusiveMaximum !== true) hi = integer ? Math.ceil(exHi) - 1 : exHi - (step ?? 0);
  let value = lo !== undefined ? lo : hi !== undefined && hi < 0 ? hi : 0;
  value += variant * (step ?? 1);
  if (step) value = Math.ceil(value / step - 1e-9) * step;
  if (integer) value = Math.ceil(value);
  if (hi !== undefined && value > hi) value = step ? Math.floor(hi / step) * step : integer ? Math.floor(hi) : hi;
  // A float multiple of a decimal step (0.1 × 3) can pick up binary noise; keep the step's decimals.
  if (step && !Number.isInteger(step)) value = Number(value.toFixed(String(step).split('.')[1]?.length ?? 0));
  return value;
}

function instance(schema: Schema | undefined, name: string, variant: number, ctx: Ctx): unknown {
  if (schema === undefined || schema === true) return name ? stringFor({}, name, variant) : {};
  if (schema === false || ctx.depth > MAX_DEPTH) return null;
  const s = merged(schema, ctx);
  const next: Ctx = { ...ctx, depth: ctx.depth + 1 };
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[variant % s.enum.length];
  if (s.nullable === true && typeOf(s) === undefined) return null;
  const branches = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined) as Schema[] | undefined;
  if (branches?.length) {
    const { anyOf: _a, oneOf: _o, ...rest } = s;
    // The first branch that is not `null` (a nullable field gets a value), each with the outer keywords.
    const pick = branches.find((b) => !(isObject(b) && b.type === 'null')) ?? branches[0]!;
    return instance(isObject(pick) ? { ...rest, ...pick } : pick, name, variant, next);
  }
  switch (typeOf(s)) {
    case 'null':
      return null;
    case 'boolean':
      return variant % 2 === 1;
    case 'integer':
      return numberFor(s, true, variant);
    case 'number':
      return numberFor(s, false, variant);
    case 'string':
      return stringFor(s, name, variant);
    case 'array': {
      const prefix = (Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : []) as Schema[];
      const items = (Array.isArray(s.items) ? (s.additionalItems as Schema | undefined) : (s.items as Schema | undefined));
      const contains = s.contains === undefined ? 0 : typeof s.minContains === 'number' ? s.minContains : 1;
      const min = Math.max(typeof s.minItems === 'number' ? s.minItems : 0, contains);
      const out: unknown[] = [];
      for (let i = 0; i < min; i++) {
        const itemSchema = i < prefix.length ? prefix[i] : i < contains ? (s.contains as Schema) : items;
        const singular = name.endsWith('s') ? name.slice(0, -1) : name || 'item';
        out.push(instance(itemSchema ?? {}, singular, s.uniqueItems ? variant + i : variant, next));
      }
      return out;
    }
    case 'object':
    default: {
      const properties = (isObject(s.properties) ? s.properties : {}) as Record<string, Schema>;
      const required = (Array.isArray(s.required) ? s.required : []).filter((k): k is string => typeof k === 'string');
      const keys = [...required];
      const minProps = typeof s.minProperties === 'number' ? s.minProperties : 0;
      for (const k of Object.keys(properties)) if (keys.length < minProps && !keys.includes(k)) keys.push(k);
      const out: Record<string, unknown> = {};
      for (const k of keys) out[k] = instance(properties[k] ?? (isObject(s.additionalProperties) ? s.additionalProperties : {}), k, variant, next);
      for (let i = 0; Object.keys(out).length < minProps; i++) {
        const key = `sandbox_${i}`;
        if (!(key in out)) out[key] = instance(isObject(s.additionalProperties) ? s.additionalProperties : {}, key, variant, next);
      }
      return out;
    }
  }
}

/** A minimal document valid against `schema` (see the module comment); `{}` for no schema. */
export function schemaInstance(schema: Schema | undefined): unknown {
  if (schema === undefined) return {};
  return instance(schema, '', 0, { root: isObject(schema) ? schema : {}, depth: 0 });
}
