import { PLANS, type Environment, type Permission } from '@codeloom/protocol';
import { AppError } from '../../errors.js';
import type { Store } from '../../storage/store.js';
import type { RevocationStore } from '../../limits/revocation-store.js';
import { TtlCache } from '../../storage/ttl-cache.js';
import type { Account } from '../../storage/repos/accounts-repo.js';
import type { ApiKeyRecord } from '../../storage/repos/api-keys-repo.js';
import type { KeyRing } from './key-ring.js';
import type { Principal } from './principal.js';
import { looksLikeApiKey, looksLikeJwt, sha256 } from './secrets.js';
import { findActiveAccessToken, looksLikeOAuthAccessToken } from '../oauth/oauth-secrets.js';

export const narrowToPlan = (scopes: readonly string[], plan: keyof typeof PLANS): Permission[] =>
  PLANS[plan].permissions.filter((p) => scopes.includes(p));

const TOUCH_EVERY_MS = 60_000;
/**
 * Accounts and key records are cached briefly: a plan change made elsewhere
 * (the CLI, another instance) is seen within ACCOUNT_TTL_MS. Revocation is
 * never left to the cache: a revoked key is also put in the revocation
 * store, which every instance consults on every request.
 */
const ACCOUNT_TTL_MS = 1_000;
export const KEY_CACHE_TTL_MS = 5_000;
export const apiKeyRevocationId = (keyId: string) => `key:${keyId}`;
/** How long a revoked key stays in the revocation store: past every instance's cached copy of its record. */
export const API_KEY_REVOCATION_TTL_SEC = Math.ceil(KEY_CACHE_TTL_MS / 1000) * 2;

/** Turns `Authorization: Bearer …` into a Principal. The credential's form says what it is. */
export class CredentialResolver {
  private readonly accounts = new TtlCache<string, Account>(ACCOUNT_TTL_MS);
  private readonly apiKeys = new TtlCache<string, ApiKeyRecord>(KEY_CACHE_TTL_MS);

  constructor(private readonly store: Store, private readonly keys: KeyRing, private readonly revocations: RevocationStore) {}

  /** Drops what this instance cached about a key (its owner just revoked it here). */
  forgetApiKey(keyHash: string): void {
    this.apiKeys.delete(keyHash);
  }

  private account(userId: string): Promise<Account | undefined> {
    return this.accounts.getOrLoad(userId, () => this.store.accounts.findById(userId));
  }

  async resolve(authorization: string | undefined, requestedEnv: string | undefined): Promise<Principal> {
    if (!authorization) throw new AppError('unauthorized');
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
    if (!match) throw new AppError('invalid_token', 'Send the credential as Authorization: Bearer <token>.');
    const credential = match[1]!;
    const envHeader = parseEnvironment(requestedEnv);
    if (looksLikeApiKey(credential)) return this.fromApiKey(credential, envHeader);
    if (looksLikeJwt(credential)) return this.fromSessionToken(credential, envHeader);
    if (looksLikeOAuthAccessToken(credential)) return this.fromOAuthToken(credential, envHeader);
    throw new AppError('invalid_token', 'The credential is neither an access token nor an API key this server issued.');
  }

  private async fromSessionToken(token: string, envHeader: Environment | undefined): Promise<Principal> {
    const claims = await this.keys.verify(token);
    if (await this.revocations.isRevoked(claims.sid)) throw new AppError('invalid_token', 'The session was logged out or revoked.');
    const environment = sessionEnvironment(claims.env, envHeader);
    const account = await this.account(claims.sub);
    if (!account) throw new AppError('invalid_token', 'The account of this token no longer exists.');
    return {
      type: 'session',
      user: { id: account.user.id, email: account.user.email, name: account.user.name },
      org: account.org,
      // A session acts with everything the plan grants today, so an upgrade or downgrade applies at once.
      scopes: [...PLANS[account.org.plan].permissions],
      environment,
      sessionId: claims.sid,
      expiresAt: claims.exp * 1000,
    };
  }

  /** Looked up on every request (no cache), so revocation and client deletion apply at once on every instance. */
  private async fromOAuthToken(token: string, envHeader: Environment | undefined): Promise<Principal> {
    const record = await findActiveAccessToken(this.store, token);
    const account = await this.account(record.grant.userId);
    if (!account) throw new AppError('invalid_token', 'The account of this token no longer exists.');
    return {
      type: 'oauth',
      user: { id: account.user.id, email: account.user.email, name: account.user.name },
      org: account.org,
      scopes: narrowToPlan(record.scopes, account.org.plan),
      environment: envHeader ?? 'production',
      expiresAt: Date.parse(record.expires_at),
    };
  }

  private async fromApiKey(key: string, envHeader: Environment | undefined): Promise<Principal> {
    const keyHash = sha256(key);
    const record = await this.apiKeys.getOrLoad(keyHash, () => this.store.apiKeys.findByHash(keyHash));
    if (!record || record.revoked_at || (await this.revocations.isRevoked(apiKeyRevocationId(record.id)))) {
      throw new AppError('invalid_token', 'The API key is unknown or was revoked.');
    }
    const nowMs = Date.now();
    if (record.expires_at && Date.parse(record.expires_at) <= nowMs) throw new AppError('invalid_token', 'The API key has expired.');
    if (record.environment === 'sandbox' && envHeader === 'production') {
      throw new AppError('forbidden', 'A test key (cl_test_…) cannot be used in production; drop X-Environment or use a live key.');
    }
    const account = await this.account(record.userId);
    if (!account) throw new AppError('invalid_token', 'The account of this key no longer exists.');
    if (!record.last_used_at || nowMs - Date.parse(record.last_used_at) > TOUCH_EVERY_MS) {
      const now = new Date(nowMs).toISOString();
      record.last_used_at = now;
      this.store.apiKeys.touch(record.id, now).catch(() => { /* last-used time is advisory */ });
    }
    return {
      type: 'api_key',
      user: { id: account.user.id, email: account.user.email, name: account.user.name },
      org: account.org,
      scopes: narrowToPlan(record.scopes, account.org.plan),
      environment: record.environment === 'sandbox' ? 'sandbox' : (envHeader ?? 'production'),
      apiKeyId: record.id,
      ...(record.expires_at ? { expiresAt: Date.parse(record.expires_at) } : {}),
      ...(hasKeyLimits(record) ? { keyLimits: record.limits } : {}),
    };
  }
}

/**
 * A session is valid only where it was signed in: one started in the
 * sandbox (`env` claim) stays there — asking for production is refused, as
 * with a test key — while a production session may still choose the sandbox.
 */
function sessionEnvironment(claim: string, envHeader: Environment | undefined): Environment {
  if (claim === 'sandbox') {
    if (envHeader === 'production') throw new AppError('forbidden', 'This session was started in the sandbox and cannot be used in production; sign in without X-Environment: sandbox.');
    return 'sandbox';
  }
  return envHeader ?? 'production';
}

export function parseEnvironment(value: string | undefined): Environment | undefined {
  if (value === undefined || value === '') return undefined;
  const v = value.trim().toLowerCase();
  if (v === 'production' || v === 'sandbox') return v;
  throw new AppError('validation_failed', 'X-Environment must be "production" or "sandbox".', { errors: [{ path: 'headers/x-environment', message: 'must be one of: production, sandbox' }] });
}

const hasKeyLimits = (r: ApiKeyRecord) => r.limits.requests_per_minute !== null || r.limits.tokens_per_minute !== null || r.limits.monthly_tokens !== null;
