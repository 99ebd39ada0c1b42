import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../plugins/metrics.js';
import { ProviderError } from '../../errors.js';
import type { RegisteredModel } from '../../providers/model-registry.js';
import type { RequestLogsRepo, RequestLogRow } from '../../storage/repos/request-logs-repo.js';
import type { CallDetail, UsageEntry } from '../generate/model-call.js';
import { ObservedUsageMeter } from './call-observer.js';

const model = (id: string, provider: string) => ({ id, upstreamId: id, description: '', provider: { name: provider } }) as unknown as RegisteredModel;

function setup(bodies: 'off' | 'redacted' | 'full' = 'off') {
  const rows: RequestLogRow[] = [];
  const usage: UsageEntry[] = [];
  const metrics = createMetrics();
  const meter = new ObservedUsageMeter({ record: (e) => { usage.push(e); } }, {
    logs: { insert: async (r: RequestLogRow) => { rows.push(r); } } as unknown as RequestLogsRepo, bodies, metrics: metrics.model, onError: (e) => { throw e; },
  });
  return { rows, usage, metrics, meter };
}

const GPT_A = model('gpt-a', 'openai');

const entry = (detail: Partial<CallDetail>, outcome: UsageEntry['outcome'] = 'succeeded'): UsageEntry => ({
  subject: { user: { id: 'usr_1' }, org: { id: 'org_1', plan: 'pro' }, environment: 'production', apiKeyId: 'key_1' },
  model: detail.served?.id ?? 'gpt-a', promptTokens: 10, completionTokens: 5, costMicros: 1500, outcome,
  detail: {
    origin: { route: '/api/v1/generate', requestId: 'req_1' }, requested: GPT_A, served: GPT_A, deployment: undefined,
    startedAt: Date.parse('2026-11-25T10:00:00.000Z'), queuedMs: 1.4, ttftMs: 120.6, latencyMs: 900.2, stream: true, finishReason: 'stop', error: undefined,
    messages: [{ role: 'user', content: 'my key sk-abcdefghijklmnop and bob@example.com' }], pieces: ['Hello', ' there'], watch: undefined, ...detail,
  },
});

describe('ObservedUsageMeter', () => {
  it('passes the entry on to usage, writes the log row and counts the metrics', async () => {
    const { rows, usage, metrics, meter } = setup();
    await meter.record(entry({}));
    expect(usage).toHaveLength(1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      at: '2026-11-25T10:00:00.000Z', organization_id: 'org_1', user_id: 'usr_1', api_key_id: 'key_1', route: '/api/v1/generate', model: 'gpt-a', deployment_id: null,
      status: 'succeeded', error_code: null, http_status: 200, prompt_tokens: 10, completion_tokens: 5, cost_micros: 1500, latency_ms: 900, ttft_ms: 121, queued_ms: 1,
      fallback_from: null, request_id: 'req_1', stream: 1, request_body: null, response_body: null,
    });
    // The id names the call's start: log_ + its time in base 32.
    expect(rows[0]!.id.slice(0, 13)).toBe(`log_${Date.parse('2026-11-25T10:00:00.000Z').toString(32).padStart(9, '0')}`);
    const text = await metrics.registry.metrics();
    expect(text).toContain('codeloom_model_requests_total{model="gpt-a",deployment="openai",status="succeeded"} 1');
    expect(text).toContain('codeloom_model_tokens_total{model="gpt-a",deployment="openai",type="prompt"} 10');
    expect(text).toContain('codeloom_model_cost_usd_total{model="gpt-a",deployment="openai"} 0.0015');
  });

  it('names the deployment that served, the fallback taken, and a failure\'s code and status', async () => {
    const { rows, metrics, meter } = setup();
    await meter.record(entry({ served: model('claude-b', 'anthropic'), deployment: 'dep_eu' }));
    await meter.record(entry({ error: new ProviderError('upstream_timeout', 'slow', true), finishReason: undefined, ttftMs: undefined }, 'failed'));
    await meter.record(entry({ finishReason: undefined }, 'cancelled'));
    expect(rows[0]).toMatchObject({ model: 'claude-b', deployment_id: 'dep_eu', fallback_from: 'gpt-a' });
    expect(rows[1]).toMatchObject({ status: 'failed', error_code: 'upstream_timeout', http_status: 504, ttft_ms: null });
    expect(rows[2]).toMatchObject({ status: 'cancelled', error_code: 'cancelled', http_status: 499 });
    const text = await metrics.registry.metrics();
    expect(text).toContain('codeloom_model_requests_total{model="claude-b",deployment="dep_eu",status="succeeded"} 1');
    expect(text).toContain('codeloom_fallbacks_total{model="gpt-a",fallback_model="claude-b"} 1');
    expect(text).toContain('codeloom_model_duration_seconds_count{model="gpt-a",deployment="openai",status="failed"} 1');
  });

  it('keeps bodies only when asked, masked with `redacted`', async () => {
    const redacted = setup('redacted');
    await redacted.meter.record(entry({}));
    expect(redacted.rows[0]!.request_body).toContain('sk-[REDACTED]');
    expect(redacted.rows[0]!.request_body).toContain('[EMAIL]');
    expect(redacted.rows[0]!.response_body).toBe('Hello there');
    const full = setup('full');
    await full.meter.record(entry({}));
    expect(full.rows[0]!.request_body).toContain('sk-abcdefghijklmnop');
    expect(full.rows[0]!.request_body).toContain('bob@example.com');
  });

  it('a request-log write that fails is reported, never the call\'s failure', async () => {
    const errors: unknown[] = [];
    const meter = new ObservedUsageMeter({ record: () => {} }, {
      logs: { insert: async () => { throw new Error('disk full'); } } as unknown as RequestLogsRepo, onError: (e) => errors.push(e),
    });
    expect(() => meter.record(entry({}))).not.toThrow();
    await new Promise((r) => setImmediate(r));
    expect(errors).toHaveLength(1);
  });
});
