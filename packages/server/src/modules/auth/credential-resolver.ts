import type { Environment } from '@codeloom/protocol';
import { AppError } from '../../errors.js';
import type { Store } from '../../storage/store.js';
import type { RevocationStore } from '../../limits/revocation-store.js';
import { TtlCache } from '../../storage/ttl-cache.js';
import { nowIso } from '../../storage/ids.js';
import type { Account } from '../../storage/repos/accounts-repo.js';
import type { ApiKeyRecord } from '../../storage/repos/api-keys-repo.js';
import type { OAuthTokenRecord } from '../../storage/repos/oauth-grants-repo.js';
import type { CredentialResolver } from '../../identity/credentials.js';
import { apiKeyEnvironment, oauthEnvironment, parseEnvironment, sessionEnvironment } from '../../identity/environments.js';
import type { Principal } from '../../identity/principal.js';
import { KEY_CACHE_TTL_MS, apiKeyRevocationId } from '../../identity/revocation-ids.js';
import { narrowToPlan, planPermissions } from '../../identity/scopes.js';
import { sha256 } from '../../identity/secrets.js';
import { bearerCredential, looksLikeApiKey, looksLikeJwt, looksLikeOAuthAccessToken } from '../../identity/token-formats.js';
import type { KeyRing } from './key-ring.js';

const TOUCH_EVERY_MS = 60_000;
/**
 * Accounts and key records are cached briefly: a plan change made elsewhere
 * (the CLI, another instance) is seen within ACCOUNT_TTL_MS. Revocation is
 * never left to the cache: a revoked key is also put in the revocation
 * store, which every instance consults on every request (identity/revocation-ids.ts).
 */
const ACCOUNT_TTL_MS = 1_000;

/** Turns `Authorization: Bearer …` into a Principal, over the store. The credential's form says what it is. */
export class StoreCredentialResolver implements CredentialResolver {
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
    const credential = bearerCredential(authorization);
    if (!credential) throw new AppError('invalid_token', 'Send the credential as Authorization: Bearer <token>.');
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
      scopes: [...planPermissions(account.org.plan)],
      environment,
      sessionId: claims.sid,
      expiresAt: claims.exp * 1000,
    };
  }

  /** Looked up on every request (no cache), so revocation and client deletion apply at once on every instance. */
  private async fromOAuthToken(token: string, envHeader: Environment | undefined): Promise<Principal> {
    const record = await this.activeAccessToken(token);
    const account = await this.account(record.grant.userId);
    if (!account) throw new AppError('invalid_token', 'The account of this token no longer exists.');
    return {
      type: 'oauth',
      user: { id: account.user.id, email: account.user.email, name: account.user.name },
      org: account.org,
      scopes: narrowToPlan(record.scopes, account.org.plan),
      environment: oauthEnvironment(envHeader),
      expiresAt: Date.parse(record.expires_at),
    };
  }

  /**
   * An active OAuth access token: not revoked (itself or its grant), not
   * expired. Its client still exists, since deleting a client deletes its grants.
   */
  private async activeAccessToken(token: string): Promise<OAuthTokenRecord> {
    const record = await this.store.oauthGrants.findToken(sha256(token));
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

  private async fromApiKey(key: string, envHeader: Environment | undefined): Promise<Principal> {
    const keyHash = sha256(key);
    const record = await this.apiKeys.getOrLoad(keyHash, () => this.store.apiKeys.findByHash(keyHash));
    if (!record || record.revoked_at || (await this.revocations.isRevoked(apiKeyRevocationId(record.id)))) {
      throw new AppError('invalid_token', 'The API key is unknown or was revoked.');
    }
    const nowMs = Date.now();
    if (record.expires_at && Date.parse(record.expires_at) <= nowMs) throw new AppError('invalid_token', 'The API key has expired.');
    const environment = apiKeyEnvironment(record.environment, envHeader);
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
      environment,
      apiKeyId: record.id,
      ...(record.expires_at ? { expiresAt: Date.parse(record.expires_at) } : {}),
      ...(hasKeyLimits(record) ? { keyLimits: record.limits } : {}),
    };
  }
}

const hasKeyLimits = (r: ApiKeyRecord) => r.limits.requests_per_minute !== null || r.limits.tokens_per_minute !== null || r.limits.monthly_tokens !== null;
