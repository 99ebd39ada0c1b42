import Ajv2020 from 'ajv/dist/2020.js';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { schemaInstance } from './schema-instance.js';
import { sandboxAnswer } from './answer.js';

const ajv = new Ajv.default({ strict: false, allErrors: true });
addFormats.default(ajv);
const ajv2020 = new Ajv2020.default({ strict: false, allErrors: true });
addFormats.default(ajv2020);

const SCHEMAS: Record<string, Record<string, unknown>> = {
  weather: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['city', 'unit'], additionalProperties: false },
  empty: { type: 'object', properties: {} },
  types: {
    type: 'object',
    required: ['s', 'n', 'i', 'b', 'z', 'arr', 'obj'],
    properties: {
      s: { type: 'string', minLength: 12, maxLength: 20 }, n: { type: 'number', minimum: 2.5, maximum: 3 }, i: { type: 'integer', exclusiveMinimum: 7, multipleOf: 4 },
      b: { type: 'boolean' }, z: { type: 'null' },
      arr: { type: 'array', minItems: 3, uniqueItems: true, items: { type: 'string', maxLength: 12 } },
      obj: { type: 'object', required: ['deep'], properties: { deep: { type: 'array', minItems: 1, items: { type: 'object', required: ['x'], properties: { x: { type: 'integer', maximum: -5 } } } } } },
    },
  },
  formats: {
    type: 'object', required: ['when', 'day', 'mail', 'site', 'id', 'ip'],
    properties: { when: { type: 'string', format: 'date-time' }, day: { type: 'string', format: 'date' }, mail: { type: 'string', format: 'email' }, site: { type: 'string', format: 'uri' }, id: { type: 'string', format: 'uuid' }, ip: { type: 'string', format: 'ipv4' } },
  },
  nullableUnion: { type: 'object', required: ['a', 'b', 'c'], properties: { a: { anyOf: [{ type: 'null' }, { type: 'string', minLength: 3 }] }, b: { type: ['string', 'null'] }, c: { oneOf: [{ type: 'integer', minimum: 10 }, { type: 'string', pattern: '^x' }] } } },
  refs: {
    type: 'object', required: ['steps', 'final'],
    properties: { steps: { type: 'array', minItems: 2, items: { $ref: '#/$defs/step' } }, final: { $ref: '#/definitions/answer' } },
    $defs: { step: { type: 'object', required: ['explanation', 'output'], properties: { explanation: { type: 'string' }, output: { type: 'string' } }, additionalProperties: false } },
    definitions: { answer: { type: 'string', minLength: 1 } },
  },
  allOf: { allOf: [{ type: 'object', required: ['a'], properties: { a: { type: 'integer' } } }, { required: ['b'], properties: { b: { const: 'fixed' } } }] },
  pattern: { type: 'object', required: ['code', 'slug'], properties: { code: { type: 'string', pattern: '^[A-Z]+[0-9]$' }, slug: { type: 'string', pattern: '^[a-z-]+$', minLength: 4 } } },
  minProperties: { type: 'object', minProperties: 2, properties: { only: { type: 'string' } }, additionalProperties: { type: 'integer', minimum: 1 } },
  tuple: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }], minItems: 2, items: false },
  decimals: { type: 'object', required: ['price'], properties: { price: { type: 'number', exclusiveMinimum: 0, multipleOf: 0.01 } } },
  enumNumbers: { type: 'object', required: ['level', 'tags'], properties: { level: { enum: [3, 5, 8] }, tags: { type: 'array', minItems: 2, uniqueItems: true, items: { enum: ['a', 'b', 'c'] } } } },
  notObject: { type: 'string', minLength: 5 },
};

describe('schemaInstance', () => {
  it.each(Object.entries(SCHEMAS))('%s: a document valid against the schema', (_name, schema) => {
    const doc = schemaInstance(schema);
    const validate = (schema.prefixItems ? ajv2020 : ajv).compile(schema);
    expect(validate(doc), JSON.stringify({ doc, errors: validate.errors })).toBe(true);
  });

  it('is minimal and named: required properties only, strings after their property, the first enum value', () => {
    expect(schemaInstance(SCHEMAS.weather)).toEqual({ city: 'city', unit: 'celsius' });
    expect(schemaInstance(SCHEMAS.empty)).toEqual({});
    expect(schemaInstance(undefined)).toEqual({});
  });

  it('a schema that allows nothing is not met by chance: the check is real', () => {
    const impossible = { type: 'object', required: ['a'], properties: { a: { type: 'string', pattern: '^\\d{40}$' } } };
    expect(ajv.compile(impossible)(schemaInstance(impossible))).toBe(false);
  });
});

describe('sandboxAnswer with tools and response formats', () => {
  const tools = [{ name: 'get_weather', parameters: SCHEMAS.weather }, { name: 'search', parameters: SCHEMAS.refs }];
  const user = { role: 'user' as const, content: 'Weather in Paris?' };

  it('calls the first tool with schema-valid arguments, the named one when tool_choice names it, none for "none"', () => {
    const first = sandboxAnswer({ messages: [user], tools });
    expect(first.finishReason).toBe('tool-calls');
    expect(first.pieces).toEqual([]);
    expect(first.toolCall).toMatchObject({ name: 'get_weather', id: expect.stringMatching(/^call_/) });
    expect(JSON.parse(first.toolCall!.arguments)).toEqual({ city: 'city', unit: 'celsius' });
    expect(first.toolCall!.argumentPieces.join('')).toBe(first.toolCall!.arguments);
    expect(first.usage.completionTokens).toBe(first.toolCall!.argumentPieces.length + 1);
    const named = sandboxAnswer({ messages: [user], tools, toolChoice: { name: 'search' } });
    expect(ajv.compile(SCHEMAS.refs)(JSON.parse(named.toolCall!.arguments))).toBe(true);
    const none = sandboxAnswer({ messages: [user], tools, toolChoice: 'none' });
    expect(none.toolCall).toBeUndefined();
    expect(none.finishReason).toBe('stop');
    // Deterministic: the same call, the same id and bytes.
    expect(sandboxAnswer({ messages: [user], tools })).toEqual(first);
  });

  it('answers a tool result with text that quotes it', () => {
    const call = { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' };
    const answer = sandboxAnswer({ messages: [user, { role: 'assistant', content: '', toolCalls: [call] }, { role: 'tool', toolCallId: 'call_1', content: '{"temperature":21}' }], tools });
    expect(answer.toolCall).toBeUndefined();
    expect(answer.finishReason).toBe('stop');
    expect(answer.pieces.join('')).toBe('The get_weather tool returned: {"temperature":21}. That answers: "Weather in Paris?".');
  });

  it('json_schema: a valid document; json_object: a JSON object; maxTokens cuts a tool call with length', () => {
    const doc = sandboxAnswer({ messages: [user], responseFormat: { type: 'json_schema', schema: SCHEMAS.types } });
    expect(ajv.compile(SCHEMAS.types)(JSON.parse(doc.pieces.join('')))).toBe(true);
    const obj = JSON.parse(sandboxAnswer({ messages: [user], responseFormat: { type: 'json_object' } }).pieces.join(''));
    expect(obj).toMatchObject({ request: 'Weather in Paris?' });
    const cut = sandboxAnswer({ messages: [user], tools, maxTokens: 3 });
    expect(cut.finishReason).toBe('length');
    expect(cut.usage.completionTokens).toBe(3);
    expect(cut.toolCall!.argumentPieces).toHaveLength(2);
  });
});
