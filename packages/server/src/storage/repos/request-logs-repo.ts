import { sql, type Kysely } from 'kysely';
import type { Database, RequestLogsTable } from '../database.js';
import { MultiRowInsert } from '../multi-row-insert.js';
import type { DialectName } from '../open-database.js';
import type { WriteQueue } from '../write-queue.js';

export type RequestLogRow = RequestLogsTable;

export interface RequestLogFilter {
  model?: string | undefined;
  status?: string | undefined;
  apiKeyId?: string | undefined;
  route?: string | undefined;
  /** Inclusive bounds, milliseconds since the epoch. */
  fromMs?: number | undefined;
  toMs?: number | undefined;
}

const COLUMNS = ['id', 'at', 'organization_id', 'user_id', 'api_key_id', 'route', 'model', 'deployment_id', 'status', 'error_code',
  'http_status', 'prompt_tokens', 'completion_tokens', 'cost_micros', 'latency_ms', 'ttft_ms', 'queued_ms', 'fallback_from',
  'request_id', 'stream', 'request_body', 'response_body'] as const satisfies readonly (keyof RequestLogsTable)[];

/**
 * The lowest id a row logged at `ms` can have: ids are `log_` + the time in base 32 (9 characters) + random
 * (storage/ids.ts newTimeOrderedId), so a time bound is an id bound and every query walks the primary key or an
 * index ending with it.
 */
export const logIdAt = (ms: number): string => `log_${Math.max(0, Math.floor(ms)).toString(32).padStart(9, '0')}`;

const normalize = (r: RequestLogsTable): RequestLogsTable => ({
  ...r, http_status: Number(r.http_status), prompt_tokens: Number(r.prompt_tokens), completion_tokens: Number(r.completion_tokens),
  cost_micros: Number(r.cost_micros), latency_ms: Number(r.latency_ms), ttft_ms: r.ttft_ms === null ? null : Number(r.ttft_ms),
  queued_ms: Number(r.queued_ms), stream: Number(r.stream),
});

export class RequestLogsRepo {
  /** Rows join the group commit of the call's usage row (and a generation's record): no commit of their own. */
  private readonly queued: (row: RequestLogsTable) => Promise<void>;

  constructor(private readonly db: Kysely<Database>, dialect: DialectName, writes: WriteQueue) {
    this.queued = writes.kind({ statement: new MultiRowInsert<RequestLogsTable>(dialect, 'request_logs', COLUMNS) });
  }

  /** Resolves once the row is committed (with whatever else was waiting at the same time). */
  insert(row: RequestLogsTable): Promise<void> {
    return this.queued(row);
  }

  /** Newest first, scoped to one organization. */
  async list(organizationId: string, filter: RequestLogFilter, page: number, limit: number): Promise<{ rows: RequestLogsTable[]; total: number }> {
    let base = this.db.selectFrom('request_logs').where('organization_id', '=', organizationId);
    if (filter.model !== undefined) base = base.where('model', '=', filter.model);
    if (filter.status !== undefined) base = base.where('status', '=', filter.status);
    if (filter.apiKeyId !== undefined) base = base.where('api_key_id', '=', filter.apiKeyId);
    if (filter.route !== undefined) base = base.where('route', '=', filter.route);
    if (filter.fromMs !== undefined) base = base.where('id', '>=', logIdAt(filter.fromMs));
    if (filter.toMs !== undefined) base = base.where('id', '<', logIdAt(filter.toMs + 1));
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('id', 'desc').limit(limit).offset((page - 1) * limit).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows.map(normalize), total: Number(count.n) };
  }

  /** Scoped to one organization: another organization's row is simply not found. */
  async get(organizationId: string, id: string): Promise<RequestLogsTable | undefined> {
    const row = await this.db.selectFrom('request_logs').selectAll().where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    return row && normalize(row);
  }

  /**
   * Deletes at most `batch` rows logged before `beforeMs` (the oldest first); returns how many. Idempotent:
   * two instances running it at once delete disjoint or already-deleted rows, never anything newer.
   */
  async deleteBefore(beforeMs: number, batch: number): Promise<number> {
    const bound = logIdAt(beforeMs);
    const result = await this.db.deleteFrom('request_logs')
      .where('id', 'in', (eb) => eb.selectFrom('request_logs').select('id').where('id', '<', bound).orderBy('id').limit(batch))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Rows and (on PostgreSQL) bytes on disk of the table, for sizing. */
  async count(): Promise<number> {
    const row = await this.db.selectFrom('request_logs').select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
