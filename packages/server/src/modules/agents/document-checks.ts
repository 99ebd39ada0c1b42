import { AppError } from '../../errors.js';
import type { ModelRegistry } from '../../providers/model-registry.js';

/** A model an agent or workflow names must be one of GET /models (validation_failed listing them otherwise). */
export function requireModel(models: ModelRegistry, model: string, path: string): void {
  if (!models.find(model)) {
    const ids = models.ids();
    throw new AppError('validation_failed', `Unknown model "${model}". Available models: ${ids.join(', ')}.`, { errors: [{ path, message: `must be one of: ${ids.join(', ')}` }] });
  }
}

/** A name, trimmed; blank is a validation_failed. */
export function requireName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new AppError('validation_failed', 'name must not be blank.', { errors: [{ path: '/name', message: 'must not be blank' }] });
  return trimmed;
}
