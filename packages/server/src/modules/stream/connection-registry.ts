/** What the registry needs of a connection. */
export interface RegisteredConnection {
  heartbeat(): void;
  shutdown(): Promise<void>;
}

/** One claimed place among an account's open connections. */
export interface ConnectionSlot {
  /** Gives the place back; only the first call counts, so a connection that closes by several paths frees it once. */
  release(): void;
}

/** Open channel connections: counted per account, and reached all at once on shutdown. */
export class ConnectionRegistry {
  private readonly all = new Set<RegisteredConnection>();
  private readonly perAccount = new Map<string, number>();

  constructor(readonly maxPerAccount: number) {}

  /** One of the account's places, or undefined when it already has its maximum of open connections. */
  claim(accountKey: string): ConnectionSlot | undefined {
    const n = this.perAccount.get(accountKey) ?? 0;
    if (n >= this.maxPerAccount) return undefined;
    this.perAccount.set(accountKey, n + 1);
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.free(accountKey);
      },
    };
  }

  private free(accountKey: string): void {
    const n = (this.perAccount.get(accountKey) ?? 0) - 1;
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
