import { useState } from 'preact/hooks';
import { ErrorText, Select } from '../components/ui.js';
import { useLoad, useSession } from '../hooks.js';
import { api } from '../session.js';
import { usageSource, type UsageRow } from '../usage-source.js';

/** USD as the server keeps it (to the micro-dollar): $0.012345; "—" where the source has no cost. */
export const usd = (n: number | undefined) => (n === undefined ? '—' : `$${n.toFixed(6)}`);

const PERIODS: [number, string][] = [[7, 'Last 7 days'], [30, 'Last 30 days'], [90, 'Last 90 days']];

/** Requests and tokens per day as a bar chart (with the numbers in a table too), by model and by key. */
function Chart({ days, metric }: { days: UsageRow[]; metric: 'requests' | 'tokens' }) {
  const w = 720;
  const h = 200;
  const pad = 28;
  const max = Math.max(1, ...days.map((d) => d[metric]));
  const bw = (w - pad * 2) / days.length;
  const label = `${metric === 'requests' ? 'Requests' : 'Tokens'} per day, ${days[0]?.label} to ${days.at(-1)?.label}; highest ${max}`;
  return (
    <svg class="chart" viewBox={`0 0 ${w} ${h + 24}`} role="img" aria-label={label}>
      <line x1={pad} y1={h} x2={w - pad} y2={h} />
      <text class="axis" x={2} y={12}>{max}</text>
      <text class="axis" x={2} y={h}>0</text>
      {days.map((d, i) => {
        const bh = (d[metric] / max) * (h - 16);
        return (
          <g key={d.label}>
            <rect class="bar" x={pad + i * bw + bw * 0.15} y={h - bh} width={Math.max(1, bw * 0.7)} height={bh}><title>{`${d.label}: ${d[metric]}`}</title></rect>
            {(days.length <= 10 || i % Math.ceil(days.length / 8) === 0) && <text class="axis" x={pad + i * bw} y={h + 16}>{d.label.slice(5)}</text>}
          </g>
        );
      })}
    </svg>
  );
}

function Table({ caption, rows, first }: { caption: string; rows: UsageRow[]; first: string }) {
  return (
    <div class="table-wrap" tabIndex={0} role="group" aria-label={caption}>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead><tr><th scope="col">{first}</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Failed</th><th scope="col" class="num">Tokens</th><th scope="col" class="num">Cost (USD)</th></tr></thead>
        <tbody>
          {rows.length === 0 && <tr><td colSpan={5} class="muted">Nothing in this period.</td></tr>}
          {rows.map((r) => <tr key={r.label}><th scope="row">{r.label}</th><td class="num">{r.requests}</td><td class="num">{r.failed ?? '—'}</td><td class="num">{r.tokens.toLocaleString('en')}</td><td class="num">{usd(r.costUsd)}</td></tr>)}
        </tbody>
      </table>
    </div>
  );
}

export function UsagePage() {
  const { environment } = useSession();
  const [days, setDays] = useState(7);
  const [metric, setMetric] = useState<'requests' | 'tokens'>('tokens');
  const report = useLoad(() => usageSource(api(), days), [days, environment]);
  const r = report.data;
  return (
    <>
      <h1 tabIndex={-1}>Usage</h1>
      <div class="row">
        <Select id="period" label="Period" value={String(days)} onChange={(v) => setDays(Number(v))}>
          {PERIODS.map(([d, l]) => <option key={d} value={d}>{l}</option>)}
        </Select>
        <Select id="metric" label="Chart" value={metric} onChange={(v) => setMetric(v as 'requests' | 'tokens')}>
          <option value="tokens">Tokens per day</option>
          <option value="requests">Requests per day</option>
        </Select>
      </div>
      <ErrorText message={report.error} />
      {!r && !report.error && <p role="status">Loading…</p>}
      {r && (
        <>
          <dl class="facts" aria-label="Totals">
            <div><dt>Requests</dt><dd>{r.totals.requests}</dd></div>
            {r.totals.failed !== undefined && <div><dt>Failed</dt><dd>{r.totals.failed}</dd></div>}
            <div><dt>Tokens</dt><dd>{r.totals.tokens.toLocaleString('en')}</dd></div>
            <div><dt>Cost</dt><dd>{usd(r.totals.costUsd)}</dd></div>
            <div><dt>Environment</dt><dd>{environment}</dd></div>
          </dl>
          <Chart days={r.days} metric={metric} />
          <p class="muted">From the {r.source} of the {environment} environment: every model call, failed and cancelled ones included; days are UTC. Cost is at the prices set on this server (CODELOOM_MODEL_PRICES); a model without a price costs $0.{r.truncated ? ' (Partial figures.)' : ''}</p>
          <h2>By day</h2>
          <Table caption="Usage by day" first="Day" rows={[...r.days].reverse().filter((d) => d.requests > 0)} />
          <h2>By model</h2>
          <Table caption="Usage by model" first="Model" rows={r.byModel} />
          <h2>By key</h2>
          {r.byKey ? <Table caption="Usage by key" first="Key" rows={r.byKey} />
            : <p class="muted">This source does not record which key made a request.</p>}
        </>
      )}
    </>
  );
}
