import { dependencyDown } from './dependency-errors.js';

export interface GroupCommitOptions<T> {
  /** Writes every item in one statement or transaction: all are committed, or none is. */
  writeBatch(items: readonly T[]): Promise<void>;
  /** Writes one item alone (after a batch failed, so each item gets its own outcome). */
  writeOne(item: T): Promise<void>;
  /** Most items in one batch (the rest wait for the next). */
  maxBatch?: number;
}

interface Pending<T> {
  item: T;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Group commit: concurrent writes share one commit. `submit` resolves only once its item is committed, so a
 * caller that answers after it still never acknowledges an unsaved row. Items that arrive in the same
 * event-loop turn, or while a batch is being written, go out together in the next batch; a lone item goes
 * out on the next turn (no timer, so no added wait beyond one turn).
 *
 * A failed batch fails no one by itself: when the database is reachable (a constraint refused some row),
 * every item is written again alone, in submission order, and gets its own outcome; when the database is down, every item gets
 * that error (writing them one by one would only wait for the same outage N times).
 */
export class GroupCommit<T> {
  private queue: Pending<T>[] = [];
  private scheduled = false;
  private writing: Promise<void> | undefined;
  private readonly maxBatch: number;

  constructor(private readonly options: GroupCommitOptions<T>) {
    this.maxBatch = Math.max(1, options.maxBatch ?? 64);
  }

  submit(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled && !this.writing) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  /** Resolves once everything submitted so far has been written (or has failed). */
  async drain(): Promise<void> {
    while (this.writing || this.queue.length || this.scheduled) {
      if (this.writing) await this.writing;
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.writing || this.queue.length === 0) return;
    const batch = this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
    this.queue = batch === this.queue ? [] : this.queue.slice(this.maxBatch);
    this.writing = this.write(batch).finally(() => {
      this.writing = undefined;
      // Whatever arrived meanwhile goes out at once, as the next group.
      if (this.queue.length) this.flush();
    });
  };

  private async write(batch: Pending<T>[]): Promise<void> {
    try {
      await (batch.length === 1 ? this.options.writeOne(batch[0]!.item) : this.options.writeBatch(batch.map((p) => p.item)));
      for (const p of batch) p.resolve();
    } catch (error) {
      if (batch.length === 1 || dependencyDown(error)) {
        for (const p of batch) p.reject(error);
        return;
      }
      // One by one, in the order they were submitted: of two writes that conflict, the earlier one wins.
      for (const p of batch) await this.options.writeOne(p.item).then(p.resolve, p.reject);
    }
  }
}
