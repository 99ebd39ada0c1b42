import type { Store } from '../../storage/store.js';
import type { RevocationEntry, RevocationSource } from '../../limits/revocation-store.js';
import { API_KEY_REVOCATION_TTL_SEC, apiKeyRevocationId } from '../../identity/revocation-ids.js';

const KEY_PREFIX = apiKeyRevocationId('');

/**
 * The database as the source of truth for revocations: logged-out and
 * reused-refresh sessions (whose access tokens live up to one access-token
 * lifetime) and revoked API keys (which instances may hold in cache briefly).
 */
export class DbRevocationSource implements RevocationSource {
  constructor(private readonly store: Store, private readonly accessTokenTtl: number) {}

  async recent(): Promise<RevocationEntry[]> {
    const now = Date.now();
    const since = (sec: number) => new Date(now - sec * 1000).toISOString();
    const [sessions, keys] = await Promise.all([
      this.store.sessions.revokedSince(since(this.accessTokenTtl)),
      this.store.apiKeys.revokedSince(since(API_KEY_REVOCATION_TTL_SEC)),
    ]);
    return [
      ...sessions.map((id) => ({ id, ttlSec: this.accessTokenTtl })),
      ...keys.map((id) => ({ id: apiKeyRevocationId(id), ttlSec: API_KEY_REVOCATION_TTL_SEC })),
    ];
  }

  isRevoked(id: string): Promise<boolean> {
    return id.startsWith(KEY_PREFIX) ? this.store.apiKeys.isRevoked(id.slice(KEY_PREFIX.length)) : this.store.sessions.isRevoked(id);
  }
}
