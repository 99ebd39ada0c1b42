import type { Principal } from './principal.js';

/**
 * Turns `Authorization: Bearer …` (and the X-Environment header) into a
 * Principal, or throws the AppError the request is refused with. The auth
 * hook needs only this; modules/auth implements it over the store.
 */
export interface CredentialResolver {
  resolve(authorization: string | undefined, requestedEnv: string | undefined): Promise<Principal>;
}
