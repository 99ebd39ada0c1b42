/**
 * How API keys are revoked everywhere at once: instances cache a key record
 * for up to KEY_CACHE_TTL_MS, so a revoked key is also put in the revocation
 * store (which every instance consults on every request) under
 * `apiKeyRevocationId`, for longer than any cached copy lives.
 */
export const KEY_CACHE_TTL_MS = 5_000;
export const apiKeyRevocationId = (keyId: string) => `key:${keyId}`;
/** How long a revoked key stays in the revocation store: past every instance's cached copy of its record. */
export const API_KEY_REVOCATION_TTL_SEC = Math.ceil(KEY_CACHE_TTL_MS / 1000) * 2;
