/**
 * Model prices (CONTRACT §12.2): USD per million tokens for `input`, `output` and `cached_input`, from
 * CODELOOM_MODEL_PRICES (`{"<model id>": {"input": 2.5, "output": 10, "cached_input": 1.25}}`). A model with
 * no entry costs 0 (the sandbox and local models unless priced). Costs are integer micro-dollars.
 *
 * USD per million tokens is micro-dollars per token, so a price is kept as integer millionths of a
 * micro-dollar per token (at most six decimals), and a call's cost is exact integer arithmetic rounded once,
 * half up, to the micro-dollar: round((prompt × input + completion × output + cached × cached_input) / 10⁶).
 */
export interface ModelPrice {
  /** USD per million prompt tokens. */
  input: number;
  /** USD per million completion tokens. */
  output: number;
  /** USD per million cached prompt tokens (only where a provider reports them; default: `input`). */
  cached_input: number;
}

/** A price in integer millionths of a micro-dollar per token (exact arithmetic). */
interface ScaledPrice { input: number; output: number; cachedInput: number }

export const FREE: ModelPrice = Object.freeze({ input: 0, output: 0, cached_input: 0 });
const SCALE = 1_000_000;
/** Highest accepted price: USD 100,000 per million tokens (keeps a call's product within exact integers). */
const MAX_PRICE = 100_000;
const FIELDS = ['input', 'output', 'cached_input'] as const;

/** Parses CODELOOM_MODEL_PRICES; every problem is one line naming the setting (an empty setting: no prices). */
export function parseModelPrices(raw: string | undefined): { prices: Map<string, ModelPrice>; problems: string[] } {
  const prices = new Map<string, ModelPrice>();
  const problems: string[] = [];
  if (!raw?.trim()) return { prices, problems };
  const bad = (why: string) => problems.push(`CODELOOM_MODEL_PRICES: ${why}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    bad(`not valid JSON (${(error as Error).message}); expected {"<model>": {"input": 2.5, "output": 10, "cached_input": 1.25}}`);
    return { prices, problems };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    bad('must be a JSON object of model id → {"input", "output", "cached_input"?} in USD per million tokens');
    return { prices, problems };
  }
  for (const [model, entry] of Object.entries(parsed)) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      bad(`"${model}" must be an object {"input", "output", "cached_input"?}`);
      continue;
    }
    const unknown = Object.keys(entry).filter((k) => !(FIELDS as readonly string[]).includes(k));
    if (unknown.length) bad(`"${model}": unknown field ${unknown.map((k) => `"${k}"`).join(', ')} (allowed: input, output, cached_input)`);
    const values = entry as Record<string, unknown>;
    let ok = unknown.length === 0;
    for (const field of FIELDS) {
      const v = values[field];
      if (v === undefined) {
        if (field !== 'cached_input') {
          bad(`"${model}".${field} is required (USD per million tokens)`);
          ok = false;
        }
        continue;
      }
      if (typeof v !== 'number' || !Number.isFinite(v)) { bad(`"${model}".${field} must be a number (got ${JSON.stringify(v)})`); ok = false; continue; }
      if (v < 0) { bad(`"${model}".${field} must not be negative (got ${v})`); ok = false; continue; }
      if (v > MAX_PRICE) { bad(`"${model}".${field} must be ≤ ${MAX_PRICE} (got ${v})`); ok = false; continue; }
      if (Math.abs(Math.round(v * SCALE) - v * SCALE) > 1e-6) { bad(`"${model}".${field} has more than six decimals (got ${v})`); ok = false; }
    }
    if (ok) {
      const input = values.input as number;
      prices.set(model, { input, output: values.output as number, cached_input: (values.cached_input as number | undefined) ?? input });
    }
  }
  return { prices, problems };
}

const scaled = new WeakMap<ModelPrice, ScaledPrice>();
function scale(price: ModelPrice): ScaledPrice {
  let s = scaled.get(price);
  if (!s) scaled.set(price, s = { input: Math.round(price.input * SCALE), output: Math.round(price.output * SCALE), cachedInput: Math.round(price.cached_input * SCALE) });
  return s;
}

/** Tokens a call is charged for, as its cost counts them (`cachedTokens` is part of `promptTokens`). */
export interface PricedUsage { promptTokens: number; completionTokens: number; cachedTokens?: number | undefined }

/** A call's cost in integer micro-dollars, rounded half up once per call; 0 without a price. */
export function costMicros(price: ModelPrice | undefined, usage: PricedUsage): number {
  if (!price || price === FREE) return 0;
  const p = scale(price);
  const cached = Math.min(usage.cachedTokens ?? 0, usage.promptTokens);
  const uncached = usage.promptTokens - cached;
  const total = uncached * p.input + cached * p.cachedInput + usage.completionTokens * p.output;
  if (Number.isSafeInteger(total + SCALE)) {
    const halfUp = total + SCALE / 2;
    return (halfUp - (halfUp % SCALE)) / SCALE;
  }
  const big = BigInt(uncached) * BigInt(p.input) + BigInt(cached) * BigInt(p.cachedInput) + BigInt(usage.completionTokens) * BigInt(p.output);
  return Number((big + BigInt(SCALE / 2)) / BigInt(SCALE));
}

/** Micro-dollars as the API's `cost_usd` (a number of dollars, exact to the micro-dollar). */
export const microsToUsd = (micros: number): number => Math.round(micros) / 1_000_000;
