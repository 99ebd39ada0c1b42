import crypto, { createHash, randomBytes } from 'node:crypto';
import type { Environment } from '@codeloom/protocol';

/** One-shot crypto.hash where Node has it: no Hash object per call (it runs on every API-key request). */
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;
export const sha256 = oneShot
  ? (value: string) => oneShot('sha256', value, 'hex')
  : (value: string) => createHash('sha256').update(value).digest('hex');

const KEY_PREFIX: Record<Environment, string> = { production: 'cl_live_', sandbox: 'cl_test_' };

/** API keys carry 192 random bits; stored only as SHA-256 (plenty for secrets this long, and fast enough for every request). */
export function mintApiKey(environment: Environment): { key: string; prefix: string; hash: string } {
  const key = KEY_PREFIX[environment] + randomBytes(24).toString('base64url');
  return { key, prefix: key.slice(0, 12), hash: sha256(key) };
}

export function mintRefreshToken(): { token: string; hash: string } {
  const token = `clr_${randomBytes(32).toString('base64url')}`;
  return { token, hash: sha256(token) };
}

export const looksLikeApiKey = (credential: string) => credential.startsWith('cl_live_') || credential.startsWith('cl_test_');
export const looksLikeJwt = (credential: string) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(credential);
