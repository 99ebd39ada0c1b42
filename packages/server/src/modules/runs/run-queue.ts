/**
 * Runs wait here until their account has a free slot (and the server has
 * one): a burst of runs from one account cannot starve the others.
 */
export class RunQueue {
  private readonly waiting: Array<{ account: string; job: () => Promise<void> }> = [];
  private readonly active = new Map<string, number>();
  private running = 0;
  private stopped = false;

  constructor(private readonly perAccount: number, private readonly total: number) {}

  enqueue(account: string, job: () => Promise<void>): void {
    if (this.stopped) return;
    this.waiting.push({ account, job });
    this.pump();
  }

  get idle(): boolean {
    return this.running === 0;
  }

  stop(): void {
    this.stopped = true;
    this.waiting.length = 0;
  }

  private pump(): void {
    while (!this.stopped && this.running < this.total) {
      const i = this.waiting.findIndex((w) => (this.active.get(w.account) ?? 0) < this.perAccount);
      if (i < 0) return;
      const [next] = this.waiting.splice(i, 1);
      this.start(next!);
    }
  }

  private start({ account, job }: { account: string; job: () => Promise<void> }): void {
    this.running += 1;
    this.active.set(account, (this.active.get(account) ?? 0) + 1);
    void job().catch(() => { /* the executor records its own failures */ }).finally(() => {
      this.running -= 1;
      const n = (this.active.get(account) ?? 1) - 1;
      if (n <= 0) this.active.delete(account); else this.active.set(account, n);
      this.pump();
    });
  }
}
