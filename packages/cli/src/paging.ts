import type { Page } from '@codeloom/client';
import { print, UsageError, type GlobalFlags } from './cli-context.js';

/** The page a list command shows: `--page` (default 1) and `--limit` (1–100, default 20, as the API). */
export interface Paging {
  page: number;
  limit: number;
}

function positive(value: string | undefined, flag: string, fallback: number, max?: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || (max !== undefined && n > max)) throw new UsageError(`--${flag} takes an integer from 1${max ? ` to ${max}` : ''} (got ${JSON.stringify(value)})`);
  return n;
}

export function parsePaging(page: string | undefined, limit: string | undefined): Paging {
  return { page: positive(page, 'page', 1), limit: positive(limit, 'limit', 20, 100) };
}

/**
 * Prints one page: with --json the API's `{data, pagination}` on stdout;
 * otherwise a line per item, and on stderr where there are more pages.
 */
export function printPage<T>(flags: GlobalFlags, page: Page<T>, line: (item: T) => string, empty: string): void {
  print(flags, page, page.data.map(line).join('\n') || empty);
  const { page: n, total_pages: pages, total } = page.pagination;
  if (!flags.json && pages > 1) process.stderr.write(`page ${n} of ${pages} (${total} in all)${n < pages ? `; next: --page ${n + 1}` : ''}\n`);
}
