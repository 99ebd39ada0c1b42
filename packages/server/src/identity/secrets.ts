import crypto, { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Environment } from '@codeloom/protocol';
import { API_KEY_PREFIX, OAUTH_PREFIX, REFRESH_TOKEN_PREFIX, type OAuthSecretKind } from './token-formats.js';

/** One-shot crypto.hash where Node has it: no Hash object per call (it runs on every API-key request). */
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;
export const sha256 = oneShot
  ? (value: string) => oneShot('sha256', value, 'hex')
  : (value: string) => createHash('sha256').update(value).digest('hex');

/** Compares two SHA-256 hex digests in constant time. */
export function hashesMatch(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/** API keys carry 192 random bits; stored only as SHA-256 (plenty for secrets this long, and fast enough for every request). */
export function mintApiKey(environment: Environment): { key: string; prefix: string; hash: string } {
  const key = API_KEY_PREFIX[environment] + randomBytes(24).toString('base64url');
  return { key, prefix: key.slice(0, 12), hash: sha256(key) };
}

export function mintRefreshToken(): { token: string; hash: string } {
  const token = `${REFRESH_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { token, hash: sha256(token) };
}

/** OAuth secrets carry 256 random bits each; stored only as SHA-256. */
export const mintOAuthSecret = (kind: OAuthSecretKind) => OAUTH_PREFIX[kind] + randomBytes(32).toString('base64url');
