import type { Redis } from 'ioredis';

/** A revocation the store must know: its id and how long a credential it refuses could still be presented. */
export interface RevocationEntry {
  id: string;
  ttlSec: number;
}

/** The source of truth (the database): what the store reloads from, and asks when it has lost its entries. */
export interface RevocationSource {
  /** Every revocation still in force. */
  recent(): Promise<RevocationEntry[]>;
  isRevoked(id: string): Promise<boolean>;
}

/**
 * Credentials revoked before they expire (sessions whose JWTs are still
 * within their lifetime, API keys instances may still hold in cache). A fast
 * copy of what the database says: entries live only as long as such a
 * credential could, and a store that lost them (Redis restarted or flushed)
 * asks the database until it has reloaded.
 */
export interface RevocationStore {
  revoke(id: string, ttlSec: number): Promise<void>;
  isRevoked(id: string): Promise<boolean>;
  /** Loads every revocation still in force from the source (at start). */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export class MemoryRevocationStore implements RevocationStore {
  private readonly entries = new Map<string, number>();
  constructor(private readonly source?: RevocationSource) {}

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

  async restore() {
    for (const e of (await this.source?.recent()) ?? []) await this.revoke(e.id, e.ttlSec);
  }

  async close() {}
}

/** Present while the Redis copy is complete: written after a full load, gone when Redis lost its data. */
const LOADED = '__loaded';

/**
 * Revocations in Redis, shared by every instance. The `__loaded` mark is
 * read with each entry (one MGET): when it is missing, Redis restarted empty
 * or was flushed, so the check asks the database and a reload starts. After
 * a reconnect the mark is dropped and the store reloaded, since revocations
 * made while Redis was unreachable are only in the database.
 */
export class RedisRevocationStore implements RevocationStore {
  private reloading: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private wasDown = false;
  private closed = false;
  private readonly onReady = () => {
    if (!this.wasDown) return;
    this.wasDown = false;
    void this.redis.del(this.prefix + LOADED).catch(() => {}).finally(() => this.reloadInBackground());
  };
  private readonly onClose = () => { this.wasDown = true; };

  constructor(private readonly redis: Redis, private readonly prefix = 'codeloom:revoked:', private readonly source?: RevocationSource) {
    redis.on('ready', this.onReady);
    redis.on('close', this.onClose);
  }

  async revoke(id: string, ttlSec: number) {
    await this.redis.set(this.prefix + id, '1', 'EX', Math.max(1, ttlSec));
  }

  async isRevoked(id: string) {
    const [loaded, hit] = await this.redis.mget(this.prefix + LOADED, this.prefix + id);
    if (hit) return true;
    if (loaded || !this.source) return false;
    this.reloadInBackground();
    return this.source.isRevoked(id);
  }

  restore(): Promise<void> {
    this.reloading ??= this.load().finally(() => { this.reloading = undefined; });
    return this.reloading;
  }

  private reloadInBackground(): void {
    if (this.closed) return;
    this.restore().catch(() => {
      // The database or Redis is still down: try again shortly (checks meanwhile ask the database or fail closed).
      clearTimeout(this.retry);
      this.retry = setTimeout(() => this.reloadInBackground(), 1_000);
      this.retry.unref();
    });
  }

  private async load(): Promise<void> {
    if (!this.source) return;
    const entries = await this.source.recent();
    const tx = this.redis.multi();
    for (const e of entries) tx.set(this.prefix + e.id, '1', 'EX', Math.max(1, e.ttlSec));
    tx.set(this.prefix + LOADED, String(Date.now()));
    await tx.exec();
  }

  async close() {
    this.closed = true;
    clearTimeout(this.retry);
    this.redis.off('ready', this.onReady);
    this.redis.off('close', this.onClose);
  }
}
