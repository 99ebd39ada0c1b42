/** What the registry needs of a connection. */
export interface RegisteredConnection {
  heartbeat(): void;
  shutdown(): Promise<void>;
}

/** Open channel connections: counted per account, and reached all at once on shutdown. */
export class ConnectionRegistry {
  private readonly all = new Set<RegisteredConnection>();
  private readonly perAccount = new Map<string, number>();

  constructor(readonly maxPerAccount: number) {}

  /** false when the account already has its maximum of open connections. */
  claim(accountKey: string): boolean {
    const n = this.perAccount.get(accountKey) ?? 0;
    if (n >= this.maxPerAccount) return false;
    this.perAccount.set(accountKey, n + 1);
    return true;
  }

  release(accountKey: string): void {
    const n = (this.perAccount.get(accountKey) ?? 1) - 1;
    if (n <= 0) this.perAccount.delete(accountKey);
    else this.perAccount.set(accountKey, n);
  }

  add(c: RegisteredConnection): void { this.all.add(c); }
  delete(c: RegisteredConnection): void { this.all.delete(c); }
  get size(): number { return this.all.size; }
  connections(): Iterable<RegisteredConnection> { return this.all; }

  async shutdown(): Promise<void> {
    await Promise.all([...this.all].map((c) => c.shutdown()));
  }
}
