import { PLANS, type PlanName } from '@codeloom/protocol';
import { AppError } from '../../errors.js';
import type { ApiKeyLimits } from '../../storage/repos/api-keys-repo.js';

/**
 * An API key's own limits must fit inside its plan's: requests_per_minute and tokens_per_minute at most
 * the plan's figures (an unlimited plan figure allows any); plans have no monthly figure, so
 * monthly_tokens is the key's alone. Every field over is listed in one 400.
 */
export function assertWithinPlan(plan: PlanName, limits: Partial<ApiKeyLimits>): void {
  const planLimits = PLANS[plan].limits;
  const errors: Array<{ path: string; message: string }> = [];
  const rpm = planLimits.requests_per_minute;
  if (limits.requests_per_minute != null && rpm !== null && limits.requests_per_minute > rpm) {
    errors.push({ path: '/requests_per_minute', message: `must be at most ${rpm}, the ${plan} plan's requests per minute` });
  }
  if (limits.tokens_per_minute != null && limits.tokens_per_minute > planLimits.tokens_per_minute) {
    errors.push({ path: '/tokens_per_minute', message: `must be at most ${planLimits.tokens_per_minute}, the ${plan} plan's tokens per minute` });
  }
  if (errors.length) throw new AppError('validation_failed', `A key's limits cannot be above its plan's: ${errors.map((e) => `${e.path.slice(1)} ${e.message}`).join('; ')}.`, { errors });
}

/** The limit fields of a create or update body (absent ones stay absent; null clears). */
export function limitsOf(body: Partial<Record<keyof ApiKeyLimits, number | null | undefined>>): Partial<ApiKeyLimits> {
  const out: Partial<ApiKeyLimits> = {};
  for (const k of ['requests_per_minute', 'tokens_per_minute', 'monthly_tokens'] as const) if (body[k] !== undefined) out[k] = body[k];
  return out;
}
