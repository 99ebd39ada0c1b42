import { describe, expect, it } from 'vitest';
import { costMicros, microsToUsd, parseModelPrices } from './model-prices.js';

const price = (input: number, output: number, cached_input = input) => ({ input, output, cached_input });

describe('model prices', () => {
  it('costs integer micro-dollars, rounded half up once per call, exact where floating point is not', () => {
    expect(costMicros(price(0.15, 0.6), { promptTokens: 1001, completionTokens: 333 })).toBe(350); // 349.95
    expect(costMicros(price(0.5, 0.5), { promptTokens: 3, completionTokens: 2 })).toBe(3); // 2.5 → 3, not to even
    expect(costMicros(price(0.1, 0.2), { promptTokens: 5, completionTokens: 0 })).toBe(1); // 0.5 → 1 (5 × 0.1 is 0.5 exactly here)
    expect(costMicros(price(0.35, 0), { promptTokens: 7, completionTokens: 0 })).toBe(2); // 2.45 → 2
    expect(costMicros(price(0.000001, 0.000001), { promptTokens: 499_999, completionTokens: 0 })).toBe(0);
    expect(costMicros(price(0.000001, 0.000001), { promptTokens: 500_000, completionTokens: 0 })).toBe(1);
    expect(costMicros(undefined, { promptTokens: 1_000_000, completionTokens: 1_000_000 })).toBe(0);
    // Cached prompt tokens (none reported today) at cached_input.
    expect(costMicros(price(2.5, 10, 1.25), { promptTokens: 1000, completionTokens: 0, cachedTokens: 400 })).toBe(600 * 2.5 + 400 * 1.25);
    // Past 2^53 in millionths: exact through BigInt.
    expect(costMicros(price(100_000, 100_000), { promptTokens: 90_000_000, completionTokens: 1 })).toBe(9_000_000_100_000);
    expect(microsToUsd(350)).toBe(0.00035);
  });

  it('parses CODELOOM_MODEL_PRICES and names every problem', () => {
    expect(parseModelPrices(undefined)).toEqual({ prices: new Map(), problems: [] });
    expect(parseModelPrices('{"a": {"input": 2.5, "output": 10}}').prices.get('a')).toEqual(price(2.5, 10, 2.5));
    const { problems } = parseModelPrices('{"a": {"input": -1, "output": 1}, "b": {"input": 1, "output": 1, "x": 2}, "c": 3, "d": {"input": 0.0000001, "output": 1}}');
    expect(problems).toEqual([
      'CODELOOM_MODEL_PRICES: "a".input must not be negative (got -1)',
      'CODELOOM_MODEL_PRICES: "b": unknown field "x" (allowed: input, output, cached_input)',
      'CODELOOM_MODEL_PRICES: "c" must be an object {"input", "output", "cached_input"?}',
      'CODELOOM_MODEL_PRICES: "d".input has more than six decimals (got 1e-7)',
    ]);
    expect(parseModelPrices('nope').problems[0]).toMatch(/^CODELOOM_MODEL_PRICES: not valid JSON/);
  });
});
