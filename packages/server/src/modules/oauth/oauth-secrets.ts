import { randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors.js';
import type { Store } from '../../storage/store.js';
import type { OAuthTokenRecord } from '../../storage/repos/oauth-grants-repo.js';
import { nowIso } from '../../storage/ids.js';
import { sha256 } from '../auth/secrets.js';

/**
 * OAuth secrets are opaque random strings whose prefix says what they are,
 * so the credential resolver can route a bearer token without a lookup and
 * a leaked string is recognisable in logs and secret scanners. 256 bits
 * each; stored only as SHA-256.
 */
export const OAUTH_PREFIX = { accessToken: 'clo_at_', refreshToken: 'clo_rt_', code: 'clo_ac_', clientSecret: 'clo_cs_' } as const;

export const mintOAuthSecret = (kind: keyof typeof OAUTH_PREFIX) => OAUTH_PREFIX[kind] + randomBytes(32).toString('base64url');

export const looksLikeOAuthAccessToken = (credential: string) => credential.startsWith(OAUTH_PREFIX.accessToken);

/** Compares two SHA-256 hex digests in constant time. */
export function hashesMatch(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/**
 * An active OAuth access token: not revoked (itself or its grant), not
 * expired. Its client still exists, since deleting a client deletes its grants.
 */
export async function findActiveAccessToken(store: Store, token: string): Promise<OAuthTokenRecord> {
  const record = await store.oauthGrants.findToken(sha256(token));
  if (!record || record.kind !== 'access' || record.revoked_at || record.grant.revoked_at) {
    throw new AppError('invalid_token', 'The OAuth access token is unknown or was revoked.');
  }
  if (record.expires_at <= nowIso()) {
    throw new AppError('token_expired', 'The OAuth access token has expired; use the refresh token at /oauth/token and repeat the request.', {
      headers: { 'www-authenticate': 'Bearer error="invalid_token", error_description="token expired"' },
    });
  }
  return record;
}
