import { AppError } from './app-error.js';

/** Settings that fail validation (config/load-config.ts), every problem listed at once; the server does not start (exit 2). */
export class ConfigError extends AppError {
  constructor(readonly problems: string[]) {
    super('internal_error', `Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** A start-up step failed because of one setting: the server says which, and why, in one line (startup-failure.ts). */
export class StartupError extends AppError {
  constructor(readonly setting: string, readonly reason: string) {
    super('internal_error', `${setting}: ${reason}`);
    this.name = 'StartupError';
  }
}
