import { SpanKind, type Attributes, type Span } from '@opentelemetry/api';
import { AppError } from '../../errors.js';
import type { ModelMetrics } from '../../plugins/metrics.js';
import { failSpan, traceparentOf, type Tracing } from '../../plugins/tracing.js';
import { newTimeOrderedId } from '../../storage/ids.js';
import type { RequestLogsRepo } from '../../storage/repos/request-logs-repo.js';
import type { CallDetail, CallWatch, ModelCall, UsageEntry, UsageMeter } from '../generate/model-call.js';
import { redact } from './redact.js';

export type LogBodies = 'off' | 'redacted' | 'full';

export interface CallObserverOptions {
  /** The request log (absent: no rows). */
  logs?: RequestLogsRepo | undefined;
  bodies?: LogBodies;
  metrics?: ModelMetrics | undefined;
  /** OpenTelemetry (absent when no OTLP endpoint is configured). */
  tracing?: Tracing | undefined;
  onError(error: unknown): void;
}

interface SpanWatch extends CallWatch {
  span: Span;
}

/** What a call's row says it answered: 200, the error's status, 499 for a caller that went away. */
function errorOf(entry: UsageEntry, error: unknown): { code: string | null; status: number } {
  if (entry.outcome === 'succeeded') return { code: null, status: 200 };
  if (entry.outcome === 'cancelled') return { code: 'cancelled', status: 499 };
  if (error instanceof AppError) return { code: error.code, status: error.status };
  return { code: 'internal_error', status: 500 };
}

/**
 * The one report of a model call (UsageMeter, told by callModel once the call settles) feeds every view of
 * it: usage accounting (the wrapped meter, as before), a request log row (queued into the same group commit
 * as the usage row, and not awaited: a log write never delays an answer or fails a call), the model metrics
 * and, with tracing on, the call's span (opened by `begin`, so its `traceparent` goes upstream).
 */
export class ObservedUsageMeter implements UsageMeter {
  private readonly bodies: LogBodies;

  constructor(private readonly usage: UsageMeter, private readonly options: CallObserverOptions) {
    this.bodies = options.bodies ?? 'off';
  }

  begin(call: ModelCall): CallWatch | undefined {
    const tracing = this.options.tracing;
    if (!tracing) return undefined;
    // GenAI semantic conventions: span "{operation} {model}", kind CLIENT.
    const provider = call.model.provider.name;
    const attributes: Attributes = { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': call.model.id, 'gen_ai.provider.name': provider, 'gen_ai.system': provider };
    if (call.maxTokens !== undefined) attributes['gen_ai.request.max_tokens'] = call.maxTokens;
    if (call.temperature !== undefined) attributes['gen_ai.request.temperature'] = call.temperature;
    if (call.origin) attributes['codeloom.route'] = call.origin.route;
    const { span } = tracing.start(`chat ${call.model.id}`, call.origin?.trace, attributes, SpanKind.CLIENT);
    const watch: SpanWatch = { span, traceparent: traceparentOf(span) };
    return watch;
  }

  record(entry: UsageEntry): void | Promise<void> {
    const detail = entry.detail;
    if (detail) {
      try {
        this.observe(entry, detail);
      } catch (error) {
        this.options.onError(error);
      }
    }
    return this.usage.record(entry);
  }

  private observe(entry: UsageEntry, d: CallDetail): void {
    const { status: httpStatus, code } = errorOf(entry, d.error);
    // The deployment that served, when the model has deployments; else the provider (a bounded set either way: both come from configuration).
    const deployment = d.deployment ?? d.served.provider.name;
    const fallbackFrom = d.served === d.requested ? null : d.requested.id;
    const metrics = this.options.metrics;
    if (metrics) {
      const labels = { model: entry.model, deployment };
      metrics.requests.inc({ ...labels, status: entry.outcome });
      if (entry.promptTokens) metrics.tokens.inc({ ...labels, type: 'prompt' }, entry.promptTokens);
      if (entry.completionTokens) metrics.tokens.inc({ ...labels, type: 'completion' }, entry.completionTokens);
      if (entry.costMicros) metrics.cost.inc(labels, entry.costMicros / 1e6);
      if (d.ttftMs !== undefined) metrics.ttft.observe(labels, d.ttftMs / 1000);
      metrics.duration.observe({ ...labels, status: entry.outcome }, d.latencyMs / 1000);
      if (fallbackFrom) metrics.fallbacks.inc({ model: fallbackFrom, fallback_model: entry.model });
    }
    const span = (d.watch as SpanWatch | undefined)?.span;
    if (span) {
      const attributes: Attributes = {
        'gen_ai.response.model': entry.model, 'gen_ai.usage.input_tokens': entry.promptTokens, 'gen_ai.usage.output_tokens': entry.completionTokens,
        'codeloom.cost_usd': entry.costMicros / 1e6, 'codeloom.stream': d.stream,
      };
      if (d.finishReason) attributes['gen_ai.response.finish_reasons'] = [d.finishReason];
      if (d.ttftMs !== undefined) attributes['codeloom.ttft_ms'] = Math.round(d.ttftMs);
      if (fallbackFrom) attributes['codeloom.fallback_from'] = fallbackFrom;
      if (d.deployment) attributes['codeloom.deployment_id'] = d.deployment;
      span.setAttributes(attributes);
      if (code) failSpan(span, code);
      span.end();
    }
    const logs = this.options.logs;
    if (!logs) return;
    const subject = entry.subject;
    let requestBody: string | null = null;
    let responseBody: string | null = null;
    if (this.bodies !== 'off') {
      requestBody = JSON.stringify(d.messages);
      responseBody = d.pieces.join('');
      if (this.bodies === 'redacted') {
        requestBody = redact(requestBody);
        responseBody = redact(responseBody);
      }
    }
    logs.insert({
      // Time-ordered by the call's start: the `at` that the filters and the retention job bound by id.
      id: newTimeOrderedId('log', d.startedAt), at: new Date(d.startedAt).toISOString(), organization_id: subject.org?.id ?? subject.user.id, user_id: subject.user.id,
      api_key_id: subject.apiKeyId ?? null, route: d.origin?.route ?? 'internal', model: entry.model, deployment_id: d.deployment ?? null, status: entry.outcome,
      error_code: code, http_status: httpStatus, prompt_tokens: entry.promptTokens, completion_tokens: entry.completionTokens, cost_micros: entry.costMicros,
      latency_ms: Math.round(d.latencyMs), ttft_ms: d.ttftMs === undefined ? null : Math.round(d.ttftMs), queued_ms: Math.round(d.queuedMs),
      fallback_from: fallbackFrom, request_id: d.origin?.requestId ?? null, stream: d.stream ? 1 : 0, request_body: requestBody, response_body: responseBody,
    }).catch(this.options.onError);
  }
}
