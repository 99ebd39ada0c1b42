import { createHash, randomBytes } from 'node:crypto';
import type { Environment } from '@codeloom/protocol';

export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

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
