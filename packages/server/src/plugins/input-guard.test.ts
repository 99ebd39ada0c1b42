import { describe, expect, it } from 'vitest';
import { findNul } from './input-guard.js';

describe('findNul', () => {
  it('names the first string or key holding NUL as a JSON pointer', () => {
    expect(findNul('a\u0000b')).toBe('/');
    expect(findNul({ name: 'ok', context: { 'a/b~c': ['x', 'y\u0000'] } })).toBe('/context/a~1b~0c/1');
    expect(findNul([{ ok: 1 }, { deep: [[null, 'z\u0000']] }])).toBe('/1/deep/0/1');
    expect(findNul({ outer: { 'k\u0000ey': 1 } })).toBe('/outer/k\\u0000ey');
  });

  it('finds nothing in clean values of every type', () => {
    expect(findNul({ a: 'text', b: 1, c: true, d: null, e: [1, 'two', { f: 'g' }], h: {} })).toBeUndefined();
    expect(findNul(undefined)).toBeUndefined();
    expect(findNul(Object.assign(Object.create(null), { q: 'x' }))).toBeUndefined();
    expect(findNul(Object.assign(Object.create(null), { q: 'x\u0000' }))).toBe('/q');
  });

  it('stops descending past 64 levels', () => {
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 100; i++) deep = { d: deep };
    expect(findNul(deep)).toBeUndefined();
  });
});
