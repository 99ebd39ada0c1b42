import type { ApiKey, CreateApiKeyBody, CreatedApiKey, UpdateApiKeyBody } from '@codeloom/protocol';
import { assertWithinPlan, limitsOf } from './key-limits.js';
import { AppError, notFound } from '../../errors.js';
import type { Store } from '../../storage/store.js';
import type { ApiKeyRecord } from '../../storage/repos/api-keys-repo.js';
import type { Principal } from '../../identity/principal.js';
import { grantableScopes } from '../../identity/scopes.js';
import { mintApiKey } from '../../identity/secrets.js';
import { API_KEY_REVOCATION_TTL_SEC, apiKeyRevocationId } from '../../identity/revocation-ids.js';
import type { RevocationStore } from '../../limits/revocation-store.js';
import { NO_CREDENTIAL_EVENTS, type CredentialEvents } from '../../identity/credential-events.js';
import { paginate, type Page } from '../pagination.js';

const toApiKey = (r: ApiKeyRecord): ApiKey => ({
  id: r.id, name: r.name, prefix: r.prefix, scopes: r.scopes, environment: r.environment,
  created_at: r.created_at, last_used_at: r.last_used_at, expires_at: r.expires_at, limits: r.limits,
});

export class ApiKeysService {
  constructor(
    private readonly store: Store, private readonly revocations: RevocationStore, private readonly events: CredentialEvents = NO_CREDENTIAL_EVENTS,
    /** Who administers the instance (only they may give a key the `admin` scope). */
    private readonly admins?: { isAdmin(user: { id: string; email: string }): Promise<boolean> },
  ) {}

  async create(principal: Principal, body: CreateApiKeyBody): Promise<CreatedApiKey> {
    const admin = body.scopes?.includes('admin') === true && principal.type === 'session' && (await this.admins?.isAdmin(principal.user)) === true;
    const scopes = grantableScopes(principal.org.plan, body.scopes, 'a key can only carry permissions you have', admin);
    const environment = body.environment ?? principal.environment;
    if (environment !== principal.environment && principal.environment === 'sandbox') {
      throw new AppError('validation_failed', 'A production key cannot be created from the sandbox.', { errors: [{ path: '/environment', message: 'must be sandbox in the sandbox' }] });
    }
    let expiresAt: string | null = null;
    if (body.expires_at) {
      const t = Date.parse(body.expires_at);
      if (!(t > Date.now())) throw new AppError('validation_failed', 'expires_at must be in the future.', { errors: [{ path: '/expires_at', message: 'must be in the future' }] });
      expiresAt = new Date(t).toISOString();
    }
    const limits = limitsOf(body);
    assertWithinPlan(principal.org.plan, limits);
    const minted = mintApiKey(environment);
    const record = await this.store.apiKeys.create({ userId: principal.user.id, name: body.name.trim() || 'key', prefix: minted.prefix, keyHash: minted.hash, scopes, environment, expiresAt, limits });
    return { ...toApiKey(record), key: minted.key };
  }

  async list(principal: Principal, page: number, limit: number): Promise<Page<ApiKey>> {
    const { rows, total } = await this.store.apiKeys.list(principal.user.id, principal.environment, page, limit);
    return paginate(rows.map(toApiKey), page, limit, total);
  }

  /** Renames a key or changes its limits; other instances see new limits within the key cache's life (5 s). */
  async update(principal: Principal, id: string, body: UpdateApiKeyBody): Promise<ApiKey> {
    const limits = limitsOf(body);
    assertWithinPlan(principal.org.plan, limits);
    const record = await this.store.apiKeys.update(principal.user.id, principal.environment, id, { ...(body.name !== undefined ? { name: body.name.trim() || 'key' } : {}), ...limits });
    if (!record) throw notFound('API key');
    return toApiKey(record);
  }

  async revoke(principal: Principal, id: string): Promise<void> {
    if (!(await this.store.apiKeys.revoke(principal.user.id, principal.environment, id))) throw notFound('API key');
    // Instances may hold the key record in cache for KEY_CACHE_TTL_MS; the revocation store reaches all of them now.
    await this.revocations.revoke(apiKeyRevocationId(id), API_KEY_REVOCATION_TTL_SEC);
    this.events.revoked({ userId: principal.user.id, reason: 'api_key_revoked' });
  }
}
