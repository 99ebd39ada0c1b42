import type { UsageQuery, UsageReport, UsageRow } from '@codeloom/protocol';
import { AppError } from '../../errors.js';
import type { Store } from '../../storage/store.js';
import type { UsageGroup } from '../../storage/repos/usage-repo.js';
import type { Principal } from '../../identity/principal.js';
import { usageDay } from './usage-meter.js';
import { microsToUsd } from '../../config/model-prices.js';

const DAY_MS = 86_400_000;
const MAX_DAYS = 366;

/** A query's day: YYYY-MM-DD as given, or the UTC day of an RFC 3339 time; a date that does not exist is a 400. */
function toDay(value: string, field: 'from' | 'to'): string {
  const t = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
  const day = Number.isNaN(t) ? undefined : usageDay(new Date(t));
  if (!day || (value.length === 10 && day !== value)) {
    throw new AppError('validation_failed', `${field} must be a date (YYYY-MM-DD) or an RFC 3339 time.`, { errors: [{ path: `querystring/${field}`, message: 'must be a date (YYYY-MM-DD) or an RFC 3339 time' }] });
  }
  return day;
}

/** GET /api/v1/usage: the caller's own model calls (its account, in its environment), summed per day, model or API key. */
export class UsageService {
  constructor(private readonly store: Store) {}

  async report(principal: Principal, query: UsageQuery): Promise<UsageReport> {
    const to = query.to ? toDay(query.to, 'to') : usageDay();
    const from = query.from ? toDay(query.from, 'from') : usageDay(new Date(Date.parse(`${to}T00:00:00Z`) - 29 * DAY_MS));
    if (from > to) throw new AppError('validation_failed', `from (${from}) is after to (${to}).`, { errors: [{ path: 'querystring/from', message: 'must not be after to' }] });
    if ((Date.parse(to) - Date.parse(from)) / DAY_MS + 1 > MAX_DAYS) {
      throw new AppError('validation_failed', `At most ${MAX_DAYS} days per query.`, { errors: [{ path: 'querystring/from', message: `must be within ${MAX_DAYS} days of to` }] });
    }
    const groupBy: UsageGroup = query.group_by ?? 'day';
    const rows = await this.store.usage.summarize(principal.user.id, principal.environment, from, to, groupBy);
    const data: UsageRow[] = rows.map((r) => ({
      ...(groupBy === 'day' ? { day: r.key } : groupBy === 'model' ? { model: r.key } : { api_key_id: r.key || null }),
      requests: r.requests, failed_requests: r.failedRequests, prompt_tokens: r.promptTokens,
      completion_tokens: r.completionTokens, total_tokens: r.promptTokens + r.completionTokens, cost_usd: microsToUsd(r.costMicros),
    }));
    const totals = { requests: 0, failed_requests: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
    // Totals in integer micro-dollars, so they equal the rows' sum exactly (no floating-point drift).
    let costMicros = 0;
    for (const [i, row] of data.entries()) {
      for (const k of Object.keys(totals) as Array<keyof typeof totals>) totals[k] += row[k];
      costMicros += rows[i]!.costMicros;
    }
    return { from, to, group_by: groupBy, data, totals: { ...totals, cost_usd: microsToUsd(costMicros) } };
  }
}
