import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './database.js';
import { GroupCommit } from './group-commit.js';
import type { MultiRowInsert } from './multi-row-insert.js';
import type { DialectName } from './open-database.js';

/** A kind of row written through the queue: its INSERT (or upsert), and how one batch's rows combine. */
export interface WriteKind<Row extends object> {
  statement: MultiRowInsert<Row>;
  /** The rows of one batch as they are written, e.g. increments of the same row summed (default: as given). */
  combine?(rows: Row[]): Row[];
}

interface Queued {
  kind: number;
  row: object;
}

/**
 * The rows a model call writes on the request path, of every kind (a generation's record, the call's usage
 * increment), group-committed together: what arrives in the same event-loop turn, or while a batch is being
 * written, goes out in one commit — one statement per kind, in one transaction on SQLite and one statement
 * on PostgreSQL (the kinds chained as data-modifying CTEs: one round trip). Each submit resolves once its row
 * is committed; a refused batch is written again row by row (see group-commit.ts).
 */
export class WriteQueue {
  private readonly commits: GroupCommit<Queued>;
  private readonly kinds: WriteKind<object>[] = [];

  constructor(private readonly db: Kysely<Database>, private readonly dialect: DialectName) {
    this.commits = new GroupCommit<Queued>({ writeBatch: (items) => this.write(items), writeOne: (item) => this.write([item]) });
  }

  /** Adds a kind of row; returns the function that submits one such row (resolving once it is committed). */
  kind<Row extends object>(kind: WriteKind<Row>): (row: Row) => Promise<void> {
    const index = this.kinds.push(kind as unknown as WriteKind<object>) - 1;
    return (row) => this.commits.submit({ kind: index, row });
  }

  /** Waits for rows still being written (before the database is closed). */
  drain(): Promise<void> {
    return this.commits.drain();
  }

  private async write(items: readonly Queued[]): Promise<void> {
    const byKind: object[][] = [];
    for (const item of items) (byKind[item.kind] ??= []).push(item.row);
    const parts: Array<{ statement: MultiRowInsert<object>; rows: object[] }> = [];
    byKind.forEach((rows, kind) => {
      const { statement, combine } = this.kinds[kind]!;
      parts.push({ statement, rows: combine ? combine(rows) : rows });
    });
    if (parts.length === 1) {
      await this.db.executeQuery(parts[0]!.statement.query(parts[0]!.rows));
    } else if (this.dialect === 'postgres') {
      await this.db.executeQuery(chained(parts));
    } else {
      // better-sqlite3 runs each statement synchronously: the transaction is one commit, nothing interleaves.
      await this.db.transaction().execute(async (trx) => {
        for (const { statement, rows } of parts) await trx.executeQuery(statement.query(rows));
      });
    }
  }
}

/** PostgreSQL: `with w0 as (insert …), w1 as (insert …) insert …`, one statement (every part runs to completion). */
function chained(parts: Array<{ statement: MultiRowInsert<object>; rows: object[] }>): CompiledQuery {
  const params: unknown[] = [];
  const texts = parts.map(({ statement, rows }) => {
    const text = statement.text(rows.length, params.length);
    statement.params(rows, params);
    return text;
  });
  const last = texts.pop()!;
  return CompiledQuery.raw(`with ${texts.map((t, i) => `w${i} as (${t})`).join(', ')} ${last}`, params);
}
