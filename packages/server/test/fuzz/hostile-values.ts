import fc from 'fast-check';

/** Strings an attacker tries: NUL and other control characters, lone surrogates, look-alikes, injections, very long text. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(
    '', ' ', '\u0000', 'a\u0000b', 'prj_\u0000', '\u0001\u0002\u001f\u007f', '\t\n\r', '\u001b[31mred', '\ud800', 'x\udfffy', '\udc00\ud800',
    '\uffff', '\ufeff', '\u202e', 'ａ@example.com', 'A@EXAMPLE.COM', '../../etc/passwd', '..%2f..%2f', '%00', '%ff', '%', '%zz', '%C0%AE',
    "' OR 1=1 --", '"; DROP TABLE accounts; --', '<script>alert(1)</script>', '{{7*7}}', '${jndi:ldap://x}', '__proto__', 'constructor',
    'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'a CLI to manage constructor', 'REST API for __proto__ records',
    'null', 'undefined', 'NaN', 'Infinity', '-1', '0', '1e300', '99999999999999999999', 'true', '[]', '{}', '😀', '\u0301', 'İ', 'ß',
  ) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom('\u0000', '\u0007', '\ud800', '\udfff', 'a', 'é', '\n'), maxLength: 12 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 3_000 }).map((n) => 'a'.repeat(n)) },
);

/** A very long string (over the body and URL sizes the schemas allow), for body fields only. */
export const longString: fc.Arbitrary<string> = fc.integer({ min: 3_000, max: 70_000 }).map((n) => 'a'.repeat(n));

export const hostileNumber: fc.Arbitrary<number | string> = fc.oneof(
  fc.constantFrom(0, -1, 1, 1.5, -0, 2 ** 31, 2 ** 53, 2 ** 63, 2 ** 64, 1e300, -1e300, Number.MAX_SAFE_INTEGER, Number.MIN_VALUE, 1e-300),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constantFrom('1', '1e3', '0x10', 'NaN', 'Infinity'),
);

/** Arrays and objects nested far deeper than any schema goes. */
export const deepNesting: fc.Arbitrary<unknown> = fc.integer({ min: 10, max: 3_000 }).chain((depth) =>
  fc.constantFrom('array', 'object').map((kind) => {
    let v: unknown = 'x';
    for (let i = 0; i < depth; i++) v = kind === 'array' ? [v] : { a: v };
    return v;
  }));

/** A value of the wrong JSON type, or a hostile one of the right type. */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 1, arbitrary: longString },
  { weight: 2, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], JSON.parse('{"__proto__": {"admin": true}}'), { constructor: { prototype: { admin: true } } }) },
  { weight: 1, arbitrary: deepNesting },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(hostileString, hostileString, { maxKeys: 4 }) },
);

/** Raw path segments, already (mis)encoded: sent exactly as written. */
export const rawPathSegment: fc.Arbitrary<string> = fc.constantFrom(
  '%ff', '%', '%zz', '%C0%AE', '%00', 'prj_%00', '%2e%2e', '..', '.', '%2F', '%252F', '%E2%80%AE', '%ED%A0%80', 'a%20b', '%0d%0aSet-Cookie:%20x=y',
  'x'.repeat(501), 'x'.repeat(65), '%F0%9F%98%80', ';', '%3B', '~', '*', '%2A',
);

/** Raw query values, already (mis)encoded. */
export const rawQueryValue: fc.Arbitrary<string> = fc.constantFrom(
  '99999999999999999999', '1e300', 'Infinity', '-Infinity', 'NaN', '0', '-1', '1.5', '101', '1000001', '9223372036854775808', '0x10', '',
  '%00', '%ff', '%', '%zz', 'abc', '1%00', '2&page=3', '%20', '1e-300', '00000000000000000000001',
);

/** Encodes for a URL when it can; a lone surrogate cannot be encoded, so it goes as its UTF-8 replacement bytes. */
export function encodePart(value: string): string {
  try { return encodeURIComponent(value); } catch { return encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '\ufffd')); }
}
