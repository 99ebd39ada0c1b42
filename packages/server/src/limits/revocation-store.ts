import type { Redis } from 'ioredis';

/**
 * Credentials revoked before they expire (sessions whose JWTs are still
 * within their lifetime). Entries live only as long as such a token could.
 */
export interface RevocationStore {
  revoke(id: string, ttlSec: number): Promise<void>;
  isRevoked(id: string): Promise<boolean>;
  close(): Promise<void>;
}

export class MemoryRevocationStore implements RevocationStore {
  private readonly entries = new Map<string, number>();

  async revoke(id: string, ttlSec: number) {
    this.entries.set(id, Date.now() + ttlSec * 1000);
    if (this.entries.size > 10_000) {
      const now = Date.now();
      for (const [k, exp] of this.entries) if (exp <= now) this.entries.delete(k);
    }
  }

  async isRevoked(id: string) {
    const exp = this.entries.get(id);
    return exp !== undefined && exp > Date.now();
  }

  async close() {}
}

export class RedisRevocationStore implements RevocationStore {
  constructor(private readonly redis: Redis, private readonly prefix = 'codeloom:revoked:') {}

  async revoke(id: string, ttlSec: number) {
    await this.redis.set(this.prefix + id, '1', 'EX', Math.max(1, ttlSec));
  }

  async isRevoked(id: string) {
    return (await this.redis.exists(this.prefix + id)) === 1;
  }

  async close() {}
}
