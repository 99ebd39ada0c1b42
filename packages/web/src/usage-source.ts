import type { Codeloom } from '@codeloom/client';

/**
 * What the Usage page shows, whatever it is computed from. Today the
 * source is the generation history (GET /api/v1/generations); once
 * GET /api/v1/usage exists, a second UsageSource that calls it replaces
 * `historyUsage` here and the page stays as it is.
 */
export interface UsageRow { label: string; requests: number; tokens: number }
export interface UsageReport {
  days: UsageRow[];          // one per day of the period, oldest first (label: YYYY-MM-DD)
  byModel: UsageRow[];
  byKey: UsageRow[] | null;  // null: the source does not know which key made a request
  totals: { requests: number; tokens: number };
  source: string;
  truncated: boolean;
}
export type UsageSource = (client: Codeloom, days: number) => Promise<UsageReport>;

const MAX_PAGES = 20; // 2 000 generations: enough for a chart, bounded for the browser
const dayOf = (iso: string) => iso.slice(0, 10);

function rowsOf(map: Map<string, UsageRow>): UsageRow[] {
  return [...map.values()].sort((a, b) => b.tokens - a.tokens || a.label.localeCompare(b.label));
}

function add(map: Map<string, UsageRow>, label: string, tokens: number) {
  const row = map.get(label) ?? { label, requests: 0, tokens: 0 };
  row.requests++;
  row.tokens += tokens;
  map.set(label, row);
}

export const historyUsage: UsageSource = async (client, days) => {
  const now = new Date();
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1)));
  const perDay = new Map<string, UsageRow>();
  for (let i = 0; i < days; i++) {
    const label = dayOf(new Date(from.getTime() + i * 86_400_000).toISOString());
    perDay.set(label, { label, requests: 0, tokens: 0 });
  }
  const byModel = new Map<string, UsageRow>();
  let truncated = false;
  let requests = 0;
  let tokens = 0;
  outer: for (let page = 1; ; page++) {
    const batch = await client.generations.page(page, { limit: 100 });
    for (const g of batch.data) {
      if (!g.created_at || g.created_at < from.toISOString()) break outer; // newest first: the rest is older
      const day = perDay.get(dayOf(g.created_at));
      if (day) { day.requests++; day.tokens += g.tokens_used; }
      add(byModel, g.model, g.tokens_used);
      requests++;
      tokens += g.tokens_used;
    }
    if (page >= batch.pagination.total_pages) break;
    if (page >= MAX_PAGES) { truncated = true; break; }
  }
  return { days: [...perDay.values()], byModel: rowsOf(byModel), byKey: null, totals: { requests, tokens }, source: 'generation history', truncated };
};

export const usageSource: UsageSource = historyUsage;
