import type { RunLimits, RunStep } from '@codeloom/protocol';
import { AppError } from '../../errors.js';
import { costMicros, microsToUsd, type ModelPrice } from '../../config/model-prices.js';

/**
 * Run ceilings (CONTRACT §12.2, docs/agents.md "Run ceilings"): `config.max_tokens` bounds the tokens of a
 * whole run, `config.max_cost_usd` what it costs. Before each step its output cap is lowered so that the
 * most the step can use fits in what is left; a step that cannot fit even with an output cap of 1 (or a run
 * with nothing left) ends the run `failed` with `budget_exceeded` before the step starts. The model call
 * cuts an answer at its cap, so a lowered cap is a hard bound: the ceilings are never crossed.
 */

/** Micro-dollars in a dollar. */
const MICROS = 1_000_000;

/** What a run has spent so far: its steps' settled tokens and their cost in integer micro-dollars. */
export interface RunSpent { tokens: number; micros: number }

/** The most one model that may serve a step would use: the prompt part (fixed) and the output part (at most the cap). */
export interface StepUse { price?: ModelPrice | undefined; prompt: number; output: number }

/** A step's cost as the run record keeps it: integer micro-dollars from the step's `cost_usd`. */
export const stepMicros = (step: Pick<RunStep, 'cost_usd'>): number => Math.round((step.cost_usd ?? 0) * MICROS);

/** What a run has spent: the sum of its steps. */
export function spentOf(steps: readonly Pick<RunStep, 'tokens_used' | 'cost_usd'>[]): RunSpent {
  let tokens = 0;
  let micros = 0;
  for (const s of steps) {
    tokens += s.tokens_used;
    micros += stepMicros(s);
  }
  return { tokens, micros };
}

/** The run's ceilings: the execute body's where it gives one, else the agent's or workflow's; undefined when neither has any. */
export function runLimitsOf(own: Record<string, unknown>, override: { max_cost_usd?: number; max_tokens?: number } | undefined): RunLimits | undefined {
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : null);
  const limits = { max_cost_usd: num(override?.max_cost_usd) ?? num(own.max_cost_usd), max_tokens: num(override?.max_tokens) ?? num(own.max_tokens) };
  return limits.max_cost_usd === null && limits.max_tokens === null ? undefined : limits;
}

const usd = (micros: number) => `$${microsToUsd(micros).toFixed(6)}`;

/**
 * The largest output cap, at most `cap`, with which the step fits in what the run has left under both of
 * its ceilings, whichever model serves it: for each, prompt + min(output, cap) tokens, and their cost at its
 * price. Throws 429 `budget_exceeded` (naming the ceiling and the figures) when not even a cap of 1 fits.
 * A model without a price costs 0, so the cost ceiling never binds for it.
 */
export function capWithinCeilings(uses: readonly StepUse[], cap: number, limits: RunLimits | null | undefined, spent: RunSpent): number {
  if (!limits || (limits.max_tokens === null && limits.max_cost_usd === null)) return cap;
  const tokensLeft = limits.max_tokens === null ? Infinity : limits.max_tokens - spent.tokens;
  const maxMicros = limits.max_cost_usd === null ? null : Math.round(limits.max_cost_usd * MICROS);
  const microsLeft = maxMicros === null ? Infinity : maxMicros - spent.micros;
  const tokensOf = (u: StepUse, c: number) => u.prompt + Math.min(u.output, c);
  const costOf = (u: StepUse, c: number) => costMicros(u.price, { promptTokens: u.prompt, completionTokens: Math.min(u.output, c) });
  const fitsTokens = (c: number) => uses.every((u) => tokensOf(u, c) <= tokensLeft);
  const fitsCost = (c: number) => uses.every((u) => costOf(u, c) <= microsLeft);
  const fits = (c: number) => fitsTokens(c) && fitsCost(c);
  if (fits(cap)) return cap;
  if (cap < 1 || !fits(1)) {
    if (!fitsTokens(1)) {
      const most = Math.max(...uses.map((u) => tokensOf(u, 1)));
      throw exceeded(tokensLeft <= 0
        ? `The run reached its max_tokens of ${limits.max_tokens} (${spent.tokens} tokens used); no further step starts.`
        : `The run's next step would cross its max_tokens of ${limits.max_tokens}: ${spent.tokens} tokens used, ${tokensLeft} left, and the step needs up to ${most} even with 1 output token.`);
    }
    const most = Math.max(...uses.map((u) => costOf(u, 1)));
    throw exceeded(microsLeft <= 0
      ? `The run reached its max_cost_usd of ${limits.max_cost_usd} (${usd(spent.micros)} spent); no further step starts.`
      : `The run's next step would cross its max_cost_usd of ${limits.max_cost_usd}: ${usd(spent.micros)} spent, ${usd(microsLeft)} left, and the step may cost up to ${usd(most)} even with 1 output token.`);
  }
  // fits(1) and not fits(cap): the largest fitting cap in [1, cap) (fits only gets harder as the cap grows).
  let lo = 1;
  let hi = cap;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

const exceeded = (message: string) => new AppError('budget_exceeded', message);
