import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.js';
import { costMicros, type ModelPrice } from '../../config/model-prices.js';
import { capWithinCeilings, runLimitsOf, spentOf, type StepUse } from './run-ceilings.js';

const PRICE: ModelPrice = { input: 2.5, output: 10, cached_input: 1.25 };
const none = { tokens: 0, micros: 0 };

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected a budget_exceeded refusal');
}

describe('capWithinCeilings', () => {
  it('leaves the cap alone without ceilings, or when the step fits', () => {
    const uses: StepUse[] = [{ prompt: 100, output: 400 }];
    expect(capWithinCeilings(uses, 400, null, none)).toBe(400);
    expect(capWithinCeilings(uses, 400, { max_tokens: 500, max_cost_usd: null }, none)).toBe(400);
  });

  it('max_tokens: prompt bound + cap never exceeds what is left', () => {
    const uses: StepUse[] = [{ prompt: 100, output: 400 }];
    const limits = { max_tokens: 1_000, max_cost_usd: null };
    expect(capWithinCeilings(uses, 400, limits, { tokens: 700, micros: 0 })).toBe(200);
    expect(capWithinCeilings(uses, 400, limits, { tokens: 899, micros: 0 })).toBe(1);
    const e = refusal(() => capWithinCeilings(uses, 400, limits, { tokens: 900, micros: 0 }));
    expect(e.code).toBe('budget_exceeded');
    expect(e.message).toMatch(/max_tokens of 1000: 900 tokens used, 100 left, and the step needs up to 101/);
    expect(refusal(() => capWithinCeilings(uses, 400, limits, { tokens: 1_000, micros: 0 })).message).toMatch(/reached its max_tokens of 1000 \(1000 tokens used\)/);
  });

  it('a planned output below the cap (the sandbox) counts as planned', () => {
    // Uses 100 + 50 at most whatever the cap: with 160 left it needs no lowering; with 120 left, 20.
    const uses: StepUse[] = [{ prompt: 100, output: 50 }];
    expect(capWithinCeilings(uses, 4096, { max_tokens: 160, max_cost_usd: null }, none)).toBe(4096);
    expect(capWithinCeilings(uses, 4096, { max_tokens: 120, max_cost_usd: null }, none)).toBe(20);
  });

  it('max_cost_usd: the prompt at the input price plus the cap at the output price stays within what is left', () => {
    const uses: StepUse[] = [{ price: PRICE, prompt: 1_000, output: 4_096 }];
    // 1,000 × 2.5 = 2,500 micro-dollars for the prompt; each output token 10.
    const limits = { max_tokens: null, max_cost_usd: 0.01 };
    const cap = capWithinCeilings(uses, 4_096, limits, { tokens: 0, micros: 2_000 });
    expect(cap).toBe(550); // 2,500 + 550 × 10 = 8,000 = 10,000 − 2,000
    expect(costMicros(PRICE, { promptTokens: 1_000, completionTokens: cap })).toBeLessThanOrEqual(8_000);
    expect(costMicros(PRICE, { promptTokens: 1_000, completionTokens: cap + 1 })).toBeGreaterThan(8_000);
    const e = refusal(() => capWithinCeilings(uses, 4_096, limits, { tokens: 0, micros: 7_495 }));
    expect(e.message).toMatch(/max_cost_usd of 0.01: \$0.007495 spent, \$0.002505 left, and the step may cost up to \$0.002510/);
    expect(refusal(() => capWithinCeilings(uses, 4_096, limits, { tokens: 0, micros: 10_000 })).message).toMatch(/reached its max_cost_usd of 0.01/);
  });

  it('rounding: a cap whose cost rounds (half up) to just the micro-dollars left fits, one more does not', () => {
    // 0.5 USD per million → half a micro-dollar a token: 3 prompt + c output tokens cost round((3 + c) / 2).
    const half: ModelPrice = { input: 0.5, output: 0.5, cached_input: 0.5 };
    const cap = capWithinCeilings([{ price: half, prompt: 3, output: 100 }], 100, { max_tokens: null, max_cost_usd: 0.00001 }, none);
    expect(costMicros(half, { promptTokens: 3, completionTokens: cap })).toBeLessThanOrEqual(10);
    expect(costMicros(half, { promptTokens: 3, completionTokens: cap + 1 })).toBeGreaterThan(10);
  });

  it('an unpriced model costs 0, so the cost ceiling never binds for it', () => {
    expect(capWithinCeilings([{ prompt: 10_000, output: 4_096 }], 4_096, { max_tokens: null, max_cost_usd: 0.000001 }, { tokens: 0, micros: 1 })).toBe(4_096);
  });

  it('with fallbacks every candidate must fit: the tightest one decides', () => {
    const uses: StepUse[] = [{ prompt: 100, output: 4_000 }, { price: PRICE, prompt: 300, output: 4_000 }];
    // Tokens: 1,000 − 300 = 700 for the fallback. Cost: 10,000 − 750 = 9,250 → 925 output tokens.
    expect(capWithinCeilings(uses, 400, { max_tokens: 500, max_cost_usd: null }, none)).toBe(200);
    expect(capWithinCeilings(uses, 4_000, { max_tokens: null, max_cost_usd: 0.01 }, none)).toBe(925);
    expect(capWithinCeilings(uses, 4_000, { max_tokens: 1_000, max_cost_usd: 0.01 }, none)).toBe(700);
  });
});

describe('spentOf and runLimitsOf', () => {
  it('sums steps exactly in micro-dollars', () => {
    const steps = Array.from({ length: 10 }, () => ({ tokens_used: 7, cost_usd: 0.000001 }));
    expect(spentOf(steps)).toEqual({ tokens: 70, micros: 10 });
  });

  it('the execute body\'s ceilings replace the agent\'s one by one', () => {
    expect(runLimitsOf({}, undefined)).toBeUndefined();
    expect(runLimitsOf({ max_tokens: 5_000, max_cost_usd: 2 }, undefined)).toEqual({ max_tokens: 5_000, max_cost_usd: 2 });
    expect(runLimitsOf({ max_tokens: 5_000, max_cost_usd: 2 }, { max_tokens: 100 })).toEqual({ max_tokens: 100, max_cost_usd: 2 });
    expect(runLimitsOf({ maxTokens: 300 }, { max_cost_usd: 0.5 })).toEqual({ max_tokens: null, max_cost_usd: 0.5 });
  });
});
