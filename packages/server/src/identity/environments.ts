import type { Environment } from '@codeloom/protocol';
import { AppError } from '../errors.js';

/**
 * Which environment a request acts in. Production and the sandbox are two
 * separate worlds per account (keys, projects, agents, runs, usage); the
 * credential decides first, then the X-Environment header, then production.
 */

/** The X-Environment header: absent or empty is undefined; anything but production/sandbox is a 400. */
export function parseEnvironment(value: string | undefined): Environment | undefined {
  if (value === undefined || value === '') return undefined;
  const v = value.trim().toLowerCase();
  if (v === 'production' || v === 'sandbox') return v;
  throw new AppError('validation_failed', 'X-Environment must be "production" or "sandbox".', { errors: [{ path: 'headers/x-environment', message: 'must be one of: production, sandbox' }] });
}

/** Where a sign-in (register, login) starts its session: the header, else production. */
export const signInEnvironment = (header: string | undefined): Environment => parseEnvironment(header) ?? 'production';

/**
 * A session is valid only where it was signed in: one started in the
 * sandbox (`env` claim) stays there — asking for production is refused, as
 * with a test key — while a production session may still choose the sandbox.
 */
export function sessionEnvironment(claim: string, envHeader: Environment | undefined): Environment {
  if (claim === 'sandbox') {
    if (envHeader === 'production') throw new AppError('forbidden', 'This session was started in the sandbox and cannot be used in production; sign in without X-Environment: sandbox.');
    return 'sandbox';
  }
  return envHeader ?? 'production';
}

/** A test key (cl_test_…) always acts in the sandbox and is refused in production; a live key may choose the sandbox. */
export function apiKeyEnvironment(keyEnvironment: Environment, envHeader: Environment | undefined): Environment {
  if (keyEnvironment === 'sandbox') {
    if (envHeader === 'production') throw new AppError('forbidden', 'A test key (cl_test_…) cannot be used in production; drop X-Environment or use a live key.');
    return 'sandbox';
  }
  return envHeader ?? 'production';
}

/** An OAuth access token is not bound to an environment: the header decides, else production. */
export const oauthEnvironment = (envHeader: Environment | undefined): Environment => envHeader ?? 'production';
