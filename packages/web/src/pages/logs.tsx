import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorText, Pager, Select } from '../components/ui.js';
import { formatDate, useLoad, useSession } from '../hooks.js';
import { rawApi } from '../session.js';
import { usd } from './usage.js';

/** A record of GET /api/v1/logs (CONTRACT §12.7). */
interface RequestLog {
  id: string; at: string; organization_id: string; user_id: string; api_key_id: string | null; route: string; model: string;
  deployment_id: string | null; status: 'succeeded' | 'failed' | 'cancelled'; error_code: string | null; http_status: number;
  prompt_tokens: number; completion_tokens: number; cost_usd: number; latency_ms: number; ttft_ms: number | null; queued_ms: number;
  fallback_from: string | null; request_id: string | null; stream: boolean;
}
interface RequestLogDetail extends RequestLog { request_body?: string | null; response_body?: string | null }
interface RequestLogList { data: RequestLog[]; pagination: { page: number; limit: number; total: number; total_pages: number } }

const LIMIT = 20;
const ms = (n: number | null | undefined) => (n === null || n === undefined ? '—' : n < 1000 ? `${n} ms` : `${(n / 1000).toFixed(2)} s`);
const ROUTES: [string, string][] = [
  ['', 'All routes'], ['/api/v1/generate', 'POST /api/v1/generate'], ['channel', 'WebSocket channel'], ['run', 'Run steps'],
  ['/openai/v1/chat/completions', '/openai/v1/chat/completions'], ['/openai/v1/completions', '/openai/v1/completions'], ['/anthropic/v1/messages', '/anthropic/v1/messages'],
];

interface Filters { model: string; status: string; route: string; from: string; to: string }

function query(f: Filters, page: number): string {
  const q = new URLSearchParams({ page: String(page), limit: String(LIMIT) });
  if (f.model.trim()) q.set('model', f.model.trim());
  if (f.status) q.set('status', f.status);
  if (f.route) q.set('route', f.route);
  if (f.from) q.set('from', f.from);
  if (f.to) q.set('to', f.to);
  return q.toString();
}

/** One call's timing as a bar: queued (reservation), then waiting for the first token, then the rest of the answer. */
function Timing({ log }: { log: RequestLog }) {
  const total = Math.max(1, log.latency_ms);
  const queued = Math.min(log.queued_ms, total);
  const first = log.ttft_ms === null ? total : Math.min(log.ttft_ms, total);
  const pct = (n: number) => `${((n / total) * 100).toFixed(1)}%`;
  return (
    <div class="timing" role="img" aria-label={`Queued ${ms(log.queued_ms)}, first token at ${ms(log.ttft_ms)}, total ${ms(log.latency_ms)}`}>
      <span class="timing-queued" style={{ width: pct(queued) }} />
      <span class="timing-first" style={{ width: pct(first - queued) }} />
      <span class="timing-rest" style={{ width: pct(total - first) }} />
    </div>
  );
}

/** The detail drawer: a modal dialog at the side, closed with Escape or its Close button. */
function Drawer({ id, onClose }: { id: string; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const detail = useLoad(() => rawApi<RequestLogDetail>('GET', `/logs/${encodeURIComponent(id)}`), [id]);
  useEffect(() => { const d = ref.current; if (d && !d.open) d.showModal(); }, []);
  const d = detail.data;
  return (
    <dialog ref={ref} class="drawer" aria-labelledby="log-title" onClose={onClose}>
      <div class="row spread">
        <h2 id="log-title">Call {id}</h2>
        <button type="button" class="secondary" onClick={onClose} autoFocus>Close</button>
      </div>
      <ErrorText message={detail.error} />
      {!d && !detail.error && <p role="status">Loading…</p>}
      {d && (
        <>
          <Timing log={d} />
          <dl class="facts" aria-label="Call details">
            <div><dt>Status</dt><dd>{d.status}{d.error_code ? ` (${d.error_code})` : ''}, HTTP {d.http_status}</dd></div>
            <div><dt>Started</dt><dd>{formatDate(d.at)}</dd></div>
            <div><dt>Queued</dt><dd>{ms(d.queued_ms)}</dd></div>
            <div><dt>Time to first token</dt><dd>{ms(d.ttft_ms)}</dd></div>
            <div><dt>Total</dt><dd>{ms(d.latency_ms)}</dd></div>
            <div><dt>Model</dt><dd>{d.model}</dd></div>
            <div><dt>Fallback</dt><dd>{d.fallback_from ? `from ${d.fallback_from} to ${d.model}` : 'none'}</dd></div>
            <div><dt>Deployment</dt><dd>{d.deployment_id ?? 'default'}</dd></div>
            <div><dt>Tokens</dt><dd>{d.prompt_tokens.toLocaleString('en')} prompt, {d.completion_tokens.toLocaleString('en')} completion</dd></div>
            <div><dt>Cost</dt><dd>{usd(d.cost_usd)}</dd></div>
            <div><dt>Route</dt><dd>{d.route}{d.stream ? ' (streamed)' : ''}</dd></div>
            <div><dt>Request id</dt><dd>{d.request_id ?? '—'}</dd></div>
            <div><dt>API key</dt><dd>{d.api_key_id ?? 'Session or OAuth (no key)'}</dd></div>
          </dl>
          {d.request_body !== undefined && d.request_body !== null && <><h3>Request</h3><pre class="body" tabIndex={0}>{d.request_body}</pre></>}
          {d.response_body !== undefined && d.response_body !== null && <><h3>Response</h3><pre class="body" tabIndex={0}>{d.response_body}</pre></>}
        </>
      )}
    </dialog>
  );
}

export function LogsPage() {
  const { environment } = useSession();
  const [draft, setDraft] = useState<Filters>({ model: '', status: '', route: '', from: '', to: '' });
  const [filters, setFilters] = useState<Filters>(draft);
  const [page, setPage] = useState(1);
  const [open, setOpen] = useState<string | undefined>();
  const [tick, setTick] = useState(0);
  const list = useLoad(() => rawApi<RequestLogList>('GET', `/logs?${query(filters, page)}`), [filters, page, environment, tick]);
  const set = (k: keyof Filters) => (v: string) => setDraft({ ...draft, [k]: v });
  return (
    <>
      <h1 tabIndex={-1}>Logs</h1>
      <p class="muted">Every model call of your organization, newest first: the playground, the API, runs and the OpenAI- and Anthropic-compatible routes, failed and cancelled ones included.</p>
      <form class="row filters" aria-label="Filters" onSubmit={(e) => { e.preventDefault(); setPage(1); setFilters(draft); setTick(tick + 1); }}>
        <div class="field"><label for="log-model">Model</label><input id="log-model" value={draft.model} onInput={(e) => set('model')((e.currentTarget as HTMLInputElement).value)} /></div>
        <Select id="log-status" label="Status" value={draft.status} onChange={set('status')}>
          <option value="">Any status</option><option value="succeeded">Succeeded</option><option value="failed">Failed</option><option value="cancelled">Cancelled</option>
        </Select>
        <Select id="log-route" label="Route" value={draft.route} onChange={set('route')}>
          {ROUTES.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
        </Select>
        <div class="field"><label for="log-from">From (UTC day)</label><input id="log-from" type="date" value={draft.from} onInput={(e) => set('from')((e.currentTarget as HTMLInputElement).value)} /></div>
        <div class="field"><label for="log-to">To (UTC day)</label><input id="log-to" type="date" value={draft.to} onInput={(e) => set('to')((e.currentTarget as HTMLInputElement).value)} /></div>
        <button type="submit">Apply filters</button>
      </form>
      <ErrorText message={list.error} />
      {!list.data && !list.error && <p role="status">Loading…</p>}
      {list.data && (
        <>
          <p class="muted" role="status">{list.data.pagination.total} {list.data.pagination.total === 1 ? 'call' : 'calls'}</p>
          <div class="table-wrap" tabIndex={0} role="group" aria-label="Model calls">
            <table>
              <caption class="visually-hidden">Model calls, newest first</caption>
              <thead><tr><th scope="col">When</th><th scope="col">Model</th><th scope="col">Route</th><th scope="col">Status</th><th scope="col" class="num">Tokens</th><th scope="col" class="num">Cost</th><th scope="col" class="num">First token</th><th scope="col" class="num">Total</th><th scope="col"><span class="visually-hidden">Details</span></th></tr></thead>
              <tbody>
                {list.data.data.length === 0 && <tr><td colSpan={9} class="muted">No calls match.</td></tr>}
                {list.data.data.map((l) => (
                  <tr key={l.id} data-testid="log-row">
                    <td>{formatDate(l.at)}</td>
                    <td>{l.model}{l.fallback_from ? <span class="muted"> (fallback from {l.fallback_from})</span> : null}</td>
                    <td>{l.route}</td>
                    <td>{l.status}{l.error_code ? <span class="muted"> {l.error_code}</span> : null}</td>
                    <td class="num">{(l.prompt_tokens + l.completion_tokens).toLocaleString('en')}</td>
                    <td class="num">{usd(l.cost_usd)}</td>
                    <td class="num">{ms(l.ttft_ms)}</td>
                    <td class="num">{ms(l.latency_ms)}</td>
                    <td><button type="button" class="secondary" onClick={() => setOpen(l.id)} aria-label={`Details of the ${l.model} call at ${formatDate(l.at)}`}>Details</button></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={page} pages={list.data.pagination.total_pages} onPage={setPage} label="Log pages" />
        </>
      )}
      {open && <Drawer id={open} onClose={() => setOpen(undefined)} />}
    </>
  );
}
