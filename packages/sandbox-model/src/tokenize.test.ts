import { describe, expect, it } from 'vitest';
import { countTokens, tokenize } from './tokenize.js';

describe('tokenize', () => {
  it('cuts like a BPE pre-tokenizer: words with one leading space, punctuation, newlines, indentation', () => {
    expect(tokenize('const x = 42;\n  return x;')).toEqual(['const', ' x', ' =', ' 42', ';', '\n', ' ', ' return', ' x', ';']);
    expect(tokenize('Hello, world!')).toEqual(['Hello', ',', ' world', '!']);
    expect(tokenize('12345')).toEqual(['123', '45']);
    expect(tokenize('\tif\r\n')).toEqual(['\t', 'if', '\r\n']);
  });

  it.each([
    '', ' ', '\n\n\n', 'tabs\t\tand   spaces  \n', 'émoji 🎉 and 中文 text', '```ts src/a.ts\nexport {};\n```', 'a\u0000b\u2028c', '    deeply\n        indented',
  ])('pieces always concatenate back to the exact text: %j', (text) => {
    const pieces = tokenize(text);
    expect(pieces.join('')).toBe(text);
    expect(pieces.every((p) => p.length > 0)).toBe(true);
    expect(countTokens(text)).toBe(pieces.length);
  });

  it('keeps surrogate pairs whole', () => {
    expect(tokenize('🎉🎉')).toEqual(['🎉', '🎉']);
  });
});
