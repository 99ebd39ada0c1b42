import type { Codeloom, UsageReport as ApiUsageReport } from '@codeloom/client';

/**
 * What the Usage page shows, whatever it is computed from. The source is
 * GET /api/v1/usage (through the SDK's `usage.get()`): every model call of the
 * account in the chosen environment — REST, SSE, the channel, runs, the
 * OpenAI-compatible routes — failed and cancelled ones included, with their cost
 * (`cost_usd`: 0 for models without a price).
 */
export interface UsageRow { label: string; requests: number; tokens: number; failed?: number; /** USD, to the micro-dollar; undefined: the source has no cost. */ costUsd?: number }
export interface UsageReport {
  days: UsageRow[];          // one per day of the period, oldest first (label: YYYY-MM-DD)
  byModel: UsageRow[];
  byKey: UsageRow[] | null;  // null: the source does not know which key made a request
  totals: { requests: number; tokens: number; failed?: number; costUsd?: number };
  source: string;
  truncated: boolean;
}
export type UsageSource = (client: Codeloom, days: number) => Promise<UsageReport>;

const DAY_MS = 86_400_000;
const dayOf = (d: Date) => d.toISOString().slice(0, 10);
const row = (label: string, r: ApiUsageReport['data'][number]): UsageRow => ({ label, requests: r.requests, tokens: r.total_tokens, failed: r.failed_requests, costUsd: r.cost_usd ?? 0 });
const byTokens = (a: UsageRow, b: UsageRow) => b.tokens - a.tokens || a.label.localeCompare(b.label);

/** The last `days` UTC days, today included: per day (zero days filled in), per model and per API key (named by the account's keys). */
export const endpointUsage: UsageSource = async (client, days) => {
  const now = new Date();
  const to = dayOf(now);
  const from = dayOf(new Date(Date.parse(`${to}T00:00:00Z`) - (days - 1) * DAY_MS));
  const query = { from, to } as const;
  const [perDay, perModel, perKey, keys] = await Promise.all([
    client.usage.get({ ...query, group_by: 'day' }),
    client.usage.get({ ...query, group_by: 'model' }),
    client.usage.get({ ...query, group_by: 'api_key' }),
    client.apiKeys.page(1, { limit: 100 }).then((p) => p.data, () => []),
  ]);
  const counted = new Map(perDay.data.map((r) => [r.day ?? '', r]));
  const dayRows: UsageRow[] = [];
  for (let i = 0; i < days; i++) {
    const label = dayOf(new Date(Date.parse(`${from}T00:00:00Z`) + i * DAY_MS));
    const r = counted.get(label);
    dayRows.push(r ? row(label, r) : { label, requests: 0, tokens: 0, failed: 0, costUsd: 0 });
  }
  const names = new Map(keys.map((k) => [k.id, `${k.name} (${k.prefix}…)`]));
  const keyLabel = (id: string | null | undefined) => (id ? names.get(id) ?? `Key ${id} (revoked)` : 'Session or OAuth (no key)');
  const t = perDay.totals;
  return {
    days: dayRows,
    byModel: perModel.data.map((r) => row(r.model ?? '', r)).sort(byTokens),
    byKey: perKey.data.map((r) => row(keyLabel(r.api_key_id), r)).sort(byTokens),
    totals: { requests: t.requests, tokens: t.total_tokens, failed: t.failed_requests, costUsd: t.cost_usd ?? 0 },
    source: 'usage records (GET /api/v1/usage)',
    truncated: false,
  };
};

export const usageSource: UsageSource = endpointUsage;
