import { AppError } from '../../errors.js';
import type { ModelRegistry } from '../../providers/model-registry.js';

/** A model an agent or workflow names must be one of GET /models (validation_failed listing them otherwise). */
export function requireModel(models: ModelRegistry, model: string, path: string): void {
  if (!models.find(model)) {
    const ids = models.ids();
    throw new AppError('validation_failed', `Unknown model "${model}". Available models: ${ids.join(', ')}.`, { errors: [{ path, message: `must be one of: ${ids.join(', ')}` }] });
  }
}

/** A config's `max_cost_usd` (a run ceiling) has at most six decimals, a whole number of micro-dollars; else validation_failed at `path`/max_cost_usd. */
export function checkCeilings(config: { max_cost_usd?: unknown } | undefined, path: string): void {
  const v = config?.max_cost_usd;
  if (typeof v !== 'number') return;
  if (Math.abs(Math.round(v * 1_000_000) - v * 1_000_000) > 1e-6) {
    throw new AppError('validation_failed', `max_cost_usd has more than six decimals (got ${v}).`, { errors: [{ path: `${path}/max_cost_usd`, message: 'must have at most six decimals' }] });
  }
}

/** A name, trimmed; blank is a validation_failed. */
export function requireName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new AppError('validation_failed', 'name must not be blank.', { errors: [{ path: '/name', message: 'must not be blank' }] });
  return trimmed;
}
