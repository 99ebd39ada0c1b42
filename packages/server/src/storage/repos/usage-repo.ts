import { sql, type Kysely } from 'kysely';
import type { Environment } from '@codeloom/protocol';
import type { Database } from '../database.js';

export interface UsageIncrement {
  userId: string; environment: Environment; apiKeyId: string | null; model: string; day: string;
  failed: boolean; promptTokens: number; completionTokens: number;
}

export type UsageGroup = 'day' | 'model' | 'api_key';

export interface UsageRow {
  key: string; requests: number; failedRequests: number; promptTokens: number; completionTokens: number;
}

const GROUP_COLUMN = { day: 'day', model: 'model', api_key: 'api_key_id' } as const;

export class UsageRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** Adds one call to its day's row, in one statement (an upsert), so concurrent calls on any instance all count. */
  async add(u: UsageIncrement): Promise<void> {
    const failed = u.failed ? 1 : 0;
    await this.db.insertInto('usage_daily').values({
      user_id: u.userId, environment: u.environment, api_key_id: u.apiKeyId ?? '', model: u.model, day: u.day,
      requests: 1, failed_requests: failed, prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens,
    }).onConflict((oc) => oc.columns(['user_id', 'environment', 'day', 'api_key_id', 'model']).doUpdateSet({
      requests: sql`usage_daily.requests + 1`,
      failed_requests: sql`usage_daily.failed_requests + ${failed}`,
      prompt_tokens: sql`usage_daily.prompt_tokens + ${u.promptTokens}`,
      completion_tokens: sql`usage_daily.completion_tokens + ${u.completionTokens}`,
    })).execute();
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
      ])
      .where('user_id', '=', userId).where('environment', '=', environment)
      .where('day', '>=', from).where('day', '<=', to)
      .groupBy(column).orderBy(column)
      .execute();
    return rows.map((r) => ({
      key: r.key, requests: Number(r.requests), failedRequests: Number(r.failed_requests),
      promptTokens: Number(r.prompt_tokens), completionTokens: Number(r.completion_tokens),
    }));
  }
}
