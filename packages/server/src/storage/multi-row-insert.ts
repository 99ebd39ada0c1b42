import { CompiledQuery } from 'kysely';
import type { DialectName } from './open-database.js';

/**
 * A fixed INSERT of N rows, its SQL text built once per row count and kept: the hot path pays for the
 * parameters only, not for building and compiling a query tree (Kysely does that on every call).
 * Columns, table and the optional conflict clause come from code, never from input.
 */
export class MultiRowInsert<Row extends object> {
  private readonly texts = new Map<number | string, string>();
  private readonly head: string;

  constructor(
    private readonly dialect: DialectName,
    table: string,
    private readonly columns: readonly (keyof Row & string)[],
    /** Appended after the values, e.g. `on conflict (…) do update set …` (an upsert). */
    private readonly tail = '',
  ) {
    this.head = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values `;
  }

  query(rows: readonly Row[]): CompiledQuery {
    return CompiledQuery.raw(this.text(rows.length), this.params(rows));
  }

  /** The parameters of `rows`, in the order of the text's placeholders. */
  params(rows: readonly Row[], into: unknown[] = []): unknown[] {
    for (const row of rows) for (const c of this.columns) into.push((row as Record<string, unknown>)[c]);
    return into;
  }

  /**
   * The statement's text for `count` rows. `offset`: how many parameters come before this statement's
   * (PostgreSQL numbers them: `$offset+1`…), when it is part of a larger statement.
   */
  text(count: number, offset = 0): string {
    const key = offset === 0 ? count : `${count}:${offset}`;
    let text = this.texts.get(key);
    if (!text) {
      const width = this.columns.length;
      const tuples: string[] = [];
      for (let r = 0; r < count; r++) {
        const marks = this.columns.map((_, c) => (this.dialect === 'postgres' ? `$${offset + r * width + c + 1}` : '?'));
        tuples.push(`(${marks.join(', ')})`);
      }
      text = this.head + tuples.join(', ') + (this.tail ? ` ${this.tail}` : '');
      if (this.texts.size >= 1024) this.texts.clear();
      this.texts.set(key, text);
    }
    return text;
  }
}
