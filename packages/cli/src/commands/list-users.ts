import type { Store } from '@codeloom/server';

interface Flags { json: boolean; page?: string | undefined; limit?: string | undefined }

const BATCH = 500;

function positiveInt(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
}

/**
 * `codeloom admin users`: every account, and a count equal to the lines
 * printed. With --page / --limit, one page of them, saying which part of the
 * whole it is.
 */
export async function listUsers(store: Store, flags: Flags): Promise<number> {
  const page = positiveInt(flags.page, 'page');
  const limit = positiveInt(flags.limit, 'limit');
  const line = (a: Awaited<ReturnType<Store['accounts']['list']>>['rows'][number]) => `${a.user.id}  ${a.user.email}  ${a.org.plan}  ${a.user.created_at}`;
  if (page === undefined && limit === undefined) {
    const all = [];
    for (let p = 1; ; p++) {
      const { rows } = await store.accounts.list(p, BATCH);
      all.push(...rows);
      if (rows.length < BATCH) break;
    }
    const text = all.length ? `${all.map(line).join('\n')}\n${all.length} user(s)` : '(no users)\n0 user(s)';
    process.stdout.write(flags.json ? `${JSON.stringify({ data: all, total: all.length })}\n` : `${text}\n`);
    return 0;
  }
  const p = page ?? 1;
  const l = limit ?? 50;
  const { rows, total } = await store.accounts.list(p, l);
  const pages = Math.max(1, Math.ceil(total / l));
  const first = (p - 1) * l + 1;
  const summary = rows.length
    ? `user(s) ${first}–${first + rows.length - 1} of ${total} (page ${p} of ${pages})`
    : `no user(s) on page ${p} (${total} in all, ${pages} page(s))`;
  const text = rows.length ? `${rows.map(line).join('\n')}\n${summary}` : summary;
  process.stdout.write(flags.json ? `${JSON.stringify({ data: rows, total, page: p, limit: l })}\n` : `${text}\n`);
  return 0;
}
