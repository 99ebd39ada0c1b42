import type { LogsQuery, RequestLog, RequestLogDetail, RequestLogList } from '@codeloom/protocol';
import { AppError, notFound } from '../../errors.js';
import type { Principal } from '../../identity/principal.js';
import type { RequestLogRow, RequestLogsRepo } from '../../storage/repos/request-logs-repo.js';
import { pageParams, paginate } from '../pagination.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A `from`/`to` bound in ms: a day is its first (from) or last (to) millisecond, UTC. */
function bound(value: string | undefined, name: 'from' | 'to'): number | undefined {
  if (value === undefined) return undefined;
  const day = DAY.test(value);
  const ms = Date.parse(day ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms)) throw new AppError('validation_failed', `"${name}" is not a valid date or time.`, { errors: [{ path: `/${name}`, message: 'must be an RFC 3339 time or a YYYY-MM-DD day' }] });
  return day && name === 'to' ? ms + 86_400_000 - 1 : ms;
}

const toLog = (r: RequestLogRow): RequestLog => ({
  id: r.id, at: r.at, organization_id: r.organization_id, user_id: r.user_id, api_key_id: r.api_key_id, route: r.route, model: r.model,
  deployment_id: r.deployment_id, status: r.status as RequestLog['status'], error_code: r.error_code, http_status: r.http_status,
  prompt_tokens: r.prompt_tokens, completion_tokens: r.completion_tokens, cost_usd: r.cost_micros / 1e6, latency_ms: r.latency_ms,
  ttft_ms: r.ttft_ms, queued_ms: r.queued_ms, fallback_from: r.fallback_from, request_id: r.request_id, stream: r.stream === 1,
});

/**
 * The request log (CONTRACT §12.7). Until organizations with members land, an organization is its account's
 * personal one: its owner sees every call of it, and every query is scoped to the caller's organization
 * (another organization's row is a 404, as if it did not exist).
 */
export class LogsService {
  constructor(private readonly repo: RequestLogsRepo) {}

  async list(principal: Principal, query: LogsQuery): Promise<RequestLogList> {
    const { page, limit } = pageParams(query);
    const fromMs = bound(query.from, 'from');
    const toMs = bound(query.to, 'to');
    if (fromMs !== undefined && toMs !== undefined && fromMs > toMs) {
      throw new AppError('validation_failed', '"from" is after "to".', { errors: [{ path: '/from', message: 'must not be after to' }] });
    }
    const { rows, total } = await this.repo.list(principal.org.id, {
      model: query.model, status: query.status, apiKeyId: query.api_key_id, route: query.route, fromMs, toMs,
    }, page, limit);
    return paginate(rows.map(toLog), page, limit, total);
  }

  async get(principal: Principal, id: string): Promise<RequestLogDetail> {
    const row = await this.repo.get(principal.org.id, id);
    if (!row) throw notFound('log');
    const detail: RequestLogDetail = toLog(row);
    if (row.request_body !== null) detail.request_body = row.request_body;
    if (row.response_body !== null) detail.response_body = row.response_body;
    return detail;
  }
}
