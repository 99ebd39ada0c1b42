import { PLANS, type Permission, type PlanName } from '@codeloom/protocol';
import { AppError } from '../errors.js';

/** Everything a plan grants today; a session acts with all of it, so an upgrade or downgrade applies at once. */
export const planPermissions = (plan: PlanName): readonly Permission[] => PLANS[plan].permissions;

/** A stored credential's scopes (API key, OAuth grant), narrowed to what the plan grants today. */
export const narrowToPlan = (scopes: readonly string[], plan: PlanName): Permission[] => {
  const granted = PLANS[plan].permissions.filter((p) => scopes.includes(p));
  // `admin` is no plan's: it stays on the credential, and admin routes check that its owner is still an administrator.
  return scopes.includes('admin') ? [...granted, 'admin'] : granted;
};

/** The `scope` claim of a session's access token. */
export const sessionScope = (plan: PlanName): string => PLANS[plan].permissions.join(' ');

/**
 * The scopes a new credential (API key, OAuth client) is given: those asked
 * for, or everything the plan grants; asking beyond the plan is refused
 * (`refusal` ends the message, e.g. "a key can only carry permissions you have").
 */
export function grantableScopes(plan: PlanName, requested: Permission[] | undefined, refusal: string, admin = false): Permission[] {
  // `admin` only for an instance administrator, and only when asked for.
  const granted: readonly Permission[] = admin ? [...PLANS[plan].permissions, 'admin'] : PLANS[plan].permissions;
  const scopes = requested ?? [...PLANS[plan].permissions];
  const beyond = scopes.filter((s) => !granted.includes(s));
  if (beyond.includes('admin')) throw new AppError('insufficient_scope', `Only an instance administrator can grant the admin scope; ${refusal}.`);
  if (beyond.length) throw new AppError('insufficient_scope', `Your ${plan} plan does not grant ${beyond.join(', ')}; ${refusal}.`);
  return scopes;
}
