import { sql, type Kysely } from 'kysely';
import type { Environment } from '@codeloom/protocol';
import type { Database, UsageDailyTable } from '../database.js';
import { MultiRowInsert } from '../multi-row-insert.js';
import type { DialectName } from '../open-database.js';
import type { WriteQueue } from '../write-queue.js';

export interface UsageIncrement {
  userId: string; environment: Environment; apiKeyId: string | null; model: string; day: string;
  failed: boolean; promptTokens: number; completionTokens: number;
  /** The call's cost in integer micro-dollars. */
  costMicros: number;
}

export type UsageGroup = 'day' | 'model' | 'api_key';

export interface UsageRow {
  key: string; requests: number; failedRequests: number; promptTokens: number; completionTokens: number; costMicros: number;
}

const GROUP_COLUMN = { day: 'day', model: 'model', api_key: 'api_key_id' } as const;

const COLUMNS = ['user_id', 'environment', 'api_key_id', 'model', 'day', 'requests', 'failed_requests', 'prompt_tokens', 'completion_tokens', 'cost_micros'] as const satisfies readonly (keyof UsageDailyTable)[];
const COUNTS = ['requests', 'failed_requests', 'prompt_tokens', 'completion_tokens', 'cost_micros'] as const;

/**
 * Adds rows to their day's rows in one statement (an upsert, atomic on its own), its text built once per row
 * count: `excluded` is the row that could not be inserted, in SQLite and PostgreSQL alike.
 */
function usageUpsert(dialect: DialectName): MultiRowInsert<UsageDailyTable> {
  return new MultiRowInsert<UsageDailyTable>(dialect, 'usage_daily', COLUMNS,
    `on conflict ("user_id", "environment", "day", "api_key_id", "model") do update set ${COUNTS.map((c) => `"${c}" = "usage_daily"."${c}" + excluded."${c}"`).join(', ')}`);
}

/** A call as the row it adds: one request (failed or not) and its tokens. */
export const usageRow = (u: UsageIncrement): UsageDailyTable => ({
  user_id: u.userId, environment: u.environment, api_key_id: u.apiKeyId ?? '', model: u.model, day: u.day,
  requests: 1, failed_requests: u.failed ? 1 : 0, prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens,
  cost_micros: u.costMicros,
});

/** Rows of the same account, environment, API key, model and day summed into one (a statement may not update a row twice). */
export function sumUsageRows(rows: UsageDailyTable[]): UsageDailyTable[] {
  if (rows.length === 1) return rows;
  const sums = new Map<string, UsageDailyTable>();
  for (const r of rows) {
    const key = `${r.user_id}\u0000${r.environment}\u0000${r.api_key_id}\u0000${r.model}\u0000${r.day}`;
    const sum = sums.get(key);
    if (!sum) {
      sums.set(key, { ...r });
      continue;
    }
    for (const c of COUNTS) sum[c] = Number(sum[c]) + Number(r[c]);
  }
  return [...sums.values()];
}

export class UsageRepo {
  private readonly queued: (row: UsageDailyTable) => Promise<void>;

  constructor(private readonly db: Kysely<Database>, dialect: DialectName, writes: WriteQueue) {
    this.queued = writes.kind({ statement: usageUpsert(dialect), combine: sumUsageRows });
  }

  /**
   * Adds one call to its day's row, group-committed with the other rows model calls write at the same time
   * (a generation's record among them, see write-queue.ts); resolves once committed.
   */
  record(u: UsageIncrement): Promise<void> {
    return this.queued(usageRow(u));
  }

  /** One account's usage in one environment over [from, to] (UTC days, inclusive), summed per group. */
  async summarize(userId: string, environment: Environment, from: string, to: string, group: UsageGroup): Promise<UsageRow[]> {
    const column = GROUP_COLUMN[group];
    const rows = await this.db.selectFrom('usage_daily')
      .select([
        sql<string>`${sql.ref(column)}`.as('key'),
        sql<string>`sum(requests)`.as('requests'),
        sql<string>`sum(failed_requests)`.as('failed_requests'),
        sql<string>`sum(prompt_tokens)`.as('prompt_tokens'),
        sql<string>`sum(completion_tokens)`.as('completion_tokens'),
        sql<string>`sum(cost_micros)`.as('cost_micros'),
      ])
      .where('user_id', '=', userId).where('environment', '=', environment)
      .where('day', '>=', from).where('day', '<=', to)
      .groupBy(column).orderBy(column)
      .execute();
    return rows.map((r) => ({
      key: r.key, requests: Number(r.requests), failedRequests: Number(r.failed_requests),
      promptTokens: Number(r.prompt_tokens), completionTokens: Number(r.completion_tokens), costMicros: Number(r.cost_micros),
    }));
  }
}
