import { lookupTable } from '@codeloom/protocol';
import type { UsageReport, UsageRow } from '@codeloom/client';
import { clientFor, print, UsageError, type GlobalFlags } from '../cli-context.js';

const USAGE = 'codeloom usage [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--by day|model|api_key]';
const GROUPS = lookupTable({ day: 'day', model: 'model', api_key: 'api_key', key: 'api_key' } as const);

/** Columns padded to their widest cell; numbers right-aligned. */
export function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}

/** USD to the micro-dollar (what the server keeps), e.g. 0.012345; 0 from a server without prices. */
export const usd = (n: number | undefined) => (n ?? 0).toFixed(6);

const counts = (r: Omit<UsageRow, 'day' | 'model' | 'api_key_id'>) =>
  [...[r.requests, r.failed_requests, r.prompt_tokens, r.completion_tokens, r.total_tokens].map((n) => n.toLocaleString('en-US')), usd(r.cost_usd)];

/** `codeloom usage`: model calls, tokens and cost of the signed-in account (in its environment), per day, model or API key. */
export async function usage(flags: GlobalFlags, args: string[], opts: { from?: string | undefined; to?: string | undefined; by?: string | undefined }): Promise<number> {
  if (args.length) throw new UsageError(USAGE);
  const group = GROUPS[opts.by ?? 'day'];
  if (!group) throw new UsageError(`--by takes day, model or api_key (got ${JSON.stringify(opts.by)})`);
  const client = clientFor(flags);
  const report: UsageReport = await client.usage.get({ ...(opts.from ? { from: opts.from } : {}), ...(opts.to ? { to: opts.to } : {}), group_by: group });
  if (flags.json) { print(flags, report, ''); return 0; }
  // Key names where the credential may list keys (a session); an API key sees ids only.
  const names = new Map<string, string>();
  if (group === 'api_key' && report.data.some((r) => r.api_key_id)) {
    for (const k of await client.apiKeys.list({ limit: 100 }).toArray().catch(() => [])) names.set(k.id, k.name);
  }
  const label = (r: UsageRow) => group === 'day' ? r.day ?? '' : group === 'model' ? r.model ?? '' : r.api_key_id ? `${r.api_key_id}${names.has(r.api_key_id) ? ` (${names.get(r.api_key_id)})` : ''}` : '(session / OAuth)';
  const head = [group === 'api_key' ? 'API KEY' : group.toUpperCase(), 'REQUESTS', 'FAILED', 'PROMPT', 'COMPLETION', 'TOTAL TOKENS', 'COST (USD)'];
  const rows = report.data.map((r) => [label(r), ...counts(r)]);
  const title = `Usage ${report.from} to ${report.to} (${client.environment}), per ${group === 'api_key' ? 'API key' : group}`;
  const body = rows.length ? table(head, [...rows, ['total', ...counts(report.totals)]]) : '(no model calls in this period)';
  print(flags, report, `${title}\n${body}`);
  return 0;
}
