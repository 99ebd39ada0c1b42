import { CompiledQuery } from 'kysely';
import type { DialectName } from './open-database.js';

/**
 * A fixed INSERT of N rows, its SQL text built once per row count and kept: the hot path pays for the
 * parameters only, not for building and compiling a query tree (Kysely does that on every call).
 * Columns and table come from code, never from input.
 */
export class MultiRowInsert<Row extends object> {
  private readonly texts = new Map<number, string>();
  private readonly head: string;

  constructor(private readonly dialect: DialectName, table: string, private readonly columns: readonly (keyof Row & string)[]) {
    this.head = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values `;
  }

  query(rows: readonly Row[]): CompiledQuery {
    const params: unknown[] = [];
    for (const row of rows) for (const c of this.columns) params.push((row as Record<string, unknown>)[c]);
    return CompiledQuery.raw(this.text(rows.length), params);
  }

  private text(count: number): string {
    let text = this.texts.get(count);
    if (!text) {
      const width = this.columns.length;
      const tuples: string[] = [];
      for (let r = 0; r < count; r++) {
        const marks = this.columns.map((_, c) => (this.dialect === 'postgres' ? `$${r * width + c + 1}` : '?'));
        tuples.push(`(${marks.join(', ')})`);
      }
      text = this.head + tuples.join(', ');
      this.texts.set(count, text);
    }
    return text;
  }
}
