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
    await upsert(this.db, u, 1);
  }

  /**
   * Adds several calls in one transaction (one commit): calls of the same row are summed into one upsert.
   * All are counted, or none is.
   */
  async addMany(items: readonly UsageIncrement[]): Promise<void> {
    const rows = new Map<string, { u: UsageIncrement; requests: number; failed: number; prompt: number; completion: number }>();
    for (const u of items) {
      const key = [u.userId, u.environment, u.apiKeyId ?? '', u.model, u.day].join('\u0000');
      const row = rows.get(key) ?? { u, requests: 0, failed: 0, prompt: 0, completion: 0 };
      row.requests += 1;
      row.failed += u.failed ? 1 : 0;
      row.prompt += u.promptTokens;
      row.completion += u.completionTokens;
      rows.set(key, row);
    }
    await this.db.transaction().execute(async (trx) => {
      for (const r of rows.values()) {
        await upsert(trx, { ...r.u, promptTokens: r.prompt, completionTokens: r.completion }, r.requests, r.failed);
      }
    });
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

/** Adds `requests` calls (of which `failed` failed) and their tokens to a day's row, creating it when missing. */
async function upsert(db: Kysely<Database>, u: UsageIncrement, requests: number, failed = u.failed ? requests : 0): Promise<void> {
  await db.insertInto('usage_daily').values({
    user_id: u.userId, environment: u.environment, api_key_id: u.apiKeyId ?? '', model: u.model, day: u.day,
    requests, failed_requests: failed, prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens,
  }).onConflict((oc) => oc.columns(['user_id', 'environment', 'day', 'api_key_id', 'model']).doUpdateSet({
    requests: sql`usage_daily.requests + ${requests}`,
    failed_requests: sql`usage_daily.failed_requests + ${failed}`,
    prompt_tokens: sql`usage_daily.prompt_tokens + ${u.promptTokens}`,
    completion_tokens: sql`usage_daily.completion_tokens + ${u.completionTokens}`,
  })).execute();
}
