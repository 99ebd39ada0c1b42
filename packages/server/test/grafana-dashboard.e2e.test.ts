/**
 * deploy/grafana/codeloom-dashboard.json (docs/operations.md): valid JSON, every panel's PromQL names only
 * metric families a running server exports in /metrics (a renamed metric breaks this test, not a dashboard
 * in production), and it shows what issue 28 asks: requests, tokens, cost, time to first token, errors by
 * deployment, fallbacks, verification outcomes, queue depth.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers/test-server.js';

const FILE = fileURLToPath(new URL('../../../deploy/grafana/codeloom-dashboard.json', import.meta.url));
const PROMQL_WORDS = new Set(['sum', 'by', 'rate', 'max', 'min', 'avg', 'histogram_quantile', 'clamp_min', 'le', 'without', 'irate', 'increase', 'count', 'on', 'ignoring', 'offset']);

interface Panel { title: string; targets?: Array<{ expr: string }> }

/** Metric names in a PromQL expression: identifiers outside `{…}` and `[…]` that are not functions, keywords or labels of `by (…)`. */
function metricNames(expr: string): string[] {
  const stripped = expr.replace(/\{[^}]*\}/g, '').replace(/\[[^\]]*\]/g, '').replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, '').replace(/"[^"]*"/g, '');
  return [...stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0]).filter((w) => !PROMQL_WORDS.has(w) && !/^\d/.test(w) && w !== 'e');
}

describe('Grafana dashboard', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t?.close(); });

  it('parses, and every metric its PromQL uses is exported by /metrics', async () => {
    const dashboard = JSON.parse(readFileSync(FILE, 'utf8')) as { title: string; uid: string; panels: Panel[] };
    expect(dashboard.title).toBe('Codeloom');
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((x) => x.expr));
    expect(exprs.length).toBeGreaterThanOrEqual(10);
    const text = await (await fetch(`${t.url}/metrics`)).text();
    // Families as the server declares them; a histogram's series are <name>_bucket, _sum and _count.
    const families = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    const exported = (name: string) => families.has(name) || [...families].some(([f, type]) => type === 'histogram' && ['_bucket', '_sum', '_count'].some((s) => name === f + s));
    const used = new Set(exprs.flatMap(metricNames));
    expect(used.size).toBeGreaterThanOrEqual(10);
    for (const name of used) expect(exported(name), `${name} is not in /metrics`).toBe(true);
    for (const name of ['codeloom_model_requests_total', 'codeloom_model_tokens_total', 'codeloom_model_cost_usd_total', 'codeloom_model_ttft_seconds_bucket',
      'codeloom_fallbacks_total', 'codeloom_verifications_total', 'codeloom_run_queue_depth']) expect(used, name).toContain(name);
    expect(exprs.some((e) => e.includes('codeloom_model_requests_total{status="failed"') && e.includes('by (deployment)'))).toBe(true);
  });

  it('the name check itself catches an unknown metric', () => {
    expect(metricNames('sum by (model) (rate(codeloom_not_a_metric_total{x="y"}[5m]))')).toEqual(['codeloom_not_a_metric_total']);
    expect(metricNames('histogram_quantile(0.95, sum by (le, model) (rate(codeloom_model_ttft_seconds_bucket[5m])))')).toEqual(['codeloom_model_ttft_seconds_bucket']);
  });
});
