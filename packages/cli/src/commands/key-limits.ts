import type { UpdateApiKeyBody } from '@codeloom/client';
import { UsageError } from '../cli-context.js';

export interface KeyLimitFlags { rpm?: string | undefined; tpm?: string | undefined; monthlyTokens?: string | undefined }
type Limits = Pick<UpdateApiKeyBody, 'requests_per_minute' | 'tokens_per_minute' | 'monthly_tokens'>;

/** `--rpm N`, `--tpm N`, `--monthly-tokens N` into the API's fields; `none` (when `allowNone`, for updates) removes a limit. */
export function parseKeyLimits(flags: KeyLimitFlags, allowNone: boolean): Limits {
  const out: Limits = {};
  const one = (value: string | undefined, flag: string, field: keyof Limits) => {
    if (value === undefined) return;
    if (allowNone && value === 'none') { out[field] = null; return; }
    if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`--${flag} takes a positive integer${allowNone ? ' or none' : ''} (got ${JSON.stringify(value)})`);
    out[field] = Number(value);
  };
  one(flags.rpm, 'rpm', 'requests_per_minute');
  one(flags.tpm, 'tpm', 'tokens_per_minute');
  one(flags.monthlyTokens, 'monthly-tokens', 'monthly_tokens');
  return out;
}

/** "30 req/min, 5,000 tokens/min, 1,000,000 tokens/month" (or "plan limits"). */
export function describeLimits(l: { requests_per_minute: number | null; tokens_per_minute: number | null; monthly_tokens: number | null }): string {
  const f = (n: number) => n.toLocaleString('en-US');
  const parts = [
    ...(l.requests_per_minute !== null ? [`${f(l.requests_per_minute)} req/min`] : []),
    ...(l.tokens_per_minute !== null ? [`${f(l.tokens_per_minute)} tokens/min`] : []),
    ...(l.monthly_tokens !== null ? [`${f(l.monthly_tokens)} tokens/month`] : []),
  ];
  return parts.length ? parts.join(', ') : 'plan limits';
}
