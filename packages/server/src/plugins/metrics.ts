import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  latency: Histogram<'method' | 'route'>;
  rateLimited: Counter<'plan'>;
  /** Model calls, their tokens, cost and timings (observability/call-observer.ts), runs and verifications. */
  model: ModelMetrics;
  /** Read at each scrape: runs waiting for an executor, open WebSocket connections (set by the composition root). */
  sources: { runQueueDepth?: () => number | Promise<number>; wsConnections?: () => number; deployments?: () => DeploymentGaugeRow[] };
  /** CODELOOM_METRICS_TOKEN: whether an Authorization header may read /metrics (always, without a token). */
  authorized(header: string | undefined): boolean;
}

/** One model deployment's health on this instance (CONTRACT §12.4), read at each scrape. */
export interface DeploymentGaugeRow { id: string; name: string; up: boolean; consecutiveFailures: number }

/**
 * The model families of CONTRACT §12.7. Labels are bounded: `model` is a registered model id (never request
 * text), `deployment` the deployment that served it, else its provider, `status`
 * one of succeeded / failed / cancelled (runs: their final status; verifications: passed, failed, error…).
 */
export interface ModelMetrics {
  requests: Counter<'model' | 'deployment' | 'status'>;
  tokens: Counter<'model' | 'deployment' | 'type'>;
  cost: Counter<'model' | 'deployment'>;
  ttft: Histogram<'model' | 'deployment'>;
  duration: Histogram<'model' | 'deployment' | 'status'>;
  fallbacks: Counter<'model' | 'fallback_model'>;
  verifications: Counter<'status'>;
  runs: Counter<'status'>;
}

const SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120];

export function createMetrics(options: { token?: string | undefined } = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const sources: Metrics['sources'] = {};
  const model: ModelMetrics = {
    requests: new Counter({ name: 'codeloom_model_requests_total', help: 'Model calls by the model that served (or last failed), its deployment and outcome', labelNames: ['model', 'deployment', 'status'], registers }),
    tokens: new Counter({ name: 'codeloom_model_tokens_total', help: 'Tokens charged for model calls, by type (prompt, completion)', labelNames: ['model', 'deployment', 'type'], registers }),
    cost: new Counter({ name: 'codeloom_model_cost_usd_total', help: 'What model calls cost in USD (configured prices)', labelNames: ['model', 'deployment'], registers }),
    ttft: new Histogram({ name: 'codeloom_model_ttft_seconds', help: 'Time from a model call\'s start to its first token', labelNames: ['model', 'deployment'], buckets: SECONDS, registers }),
    duration: new Histogram({ name: 'codeloom_model_duration_seconds', help: 'Time from a model call\'s start to its end', labelNames: ['model', 'deployment', 'status'], buckets: SECONDS, registers }),
    fallbacks: new Counter({ name: 'codeloom_fallbacks_total', help: 'Model calls served by a fallback: the model asked for and the one that served', labelNames: ['model', 'fallback_model'], registers }),
    verifications: new Counter({ name: 'codeloom_verifications_total', help: 'Verification attempts by outcome (passed, failed, error, unavailable, unsupported)', labelNames: ['status'], registers }),
    runs: new Counter({ name: 'codeloom_runs_total', help: 'Runs finished, by final status', labelNames: ['status'], registers }),
  };
  new Gauge({
    name: 'codeloom_run_queue_depth', help: 'Runs queued, waiting for an executor (every instance: read from storage at each scrape)', registers,
    async collect() { this.set(sources.runQueueDepth ? await sources.runQueueDepth() : 0); },
  });
  new Gauge({
    name: 'codeloom_ws_connections', help: 'Open WebSocket streaming connections on this instance', registers,
    collect() { this.set(sources.wsConnections ? sources.wsConnections() : 0); },
  });
  new Gauge({
    name: 'codeloom_deployment_up', help: 'Whether a model deployment takes calls on this instance (1), or is cooling down after failures or disabled (0)', labelNames: ['deployment', 'name'], registers,
    collect() { this.reset(); for (const d of sources.deployments?.() ?? []) this.set({ deployment: d.id, name: d.name }, d.up ? 1 : 0); },
  });
  new Gauge({
    name: 'codeloom_deployment_consecutive_failures', help: 'Failures in a row of a model deployment on this instance (the upstream\'s fault: 5xx, 429, timeouts, connection errors)', labelNames: ['deployment'], registers,
    collect() { this.reset(); for (const d of sources.deployments?.() ?? []) this.set({ deployment: d.id }, d.consecutiveFailures); },
  });
  // Digests of equal length, so the comparison takes the same time whatever the header holds.
  const wanted = options.token ? createHash('sha256').update(`Bearer ${options.token}`).digest() : undefined;
  const authorized = (header: string | undefined): boolean =>
    !wanted || (header !== undefined && timingSafeEqual(wanted, createHash('sha256').update(header).digest()));
  return {
    model,
    sources,
    authorized,
    registry,
    requests: new Counter({ name: 'codeloom_http_requests_total', help: 'HTTP requests by route and status', labelNames: ['method', 'route', 'status'], registers: [registry] }),
    latency: new Histogram({ name: 'codeloom_http_request_duration_seconds', help: 'HTTP request latency', labelNames: ['method', 'route'], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10], registers: [registry] }),
    rateLimited: new Counter({ name: 'codeloom_rate_limit_rejections_total', help: 'Requests refused by a rate limit', labelNames: ['plan'], registers: [registry] }),
  };
}

/** Route label is the route pattern, never the raw URL, so ids cannot blow up the label set. */
export function registerMetrics(app: FastifyInstance, metrics: Metrics) {
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.latency.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    done();
  });
}
