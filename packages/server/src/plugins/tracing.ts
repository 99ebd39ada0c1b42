import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as OTLPJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_SERVICE_NAME, ATTR_URL_PATH } from '@opentelemetry/semantic-conventions';

export interface TracingSettings {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL (traces go to `<it>/v1/traces`). */
  endpoint?: string | undefined;
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the full URL (wins over `endpoint`). */
  tracesEndpoint?: string | undefined;
  /** OTEL_SERVICE_NAME (default "codeloom"). */
  serviceName?: string | undefined;
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL / OTEL_EXPORTER_OTLP_PROTOCOL: `http/protobuf` (the default, as the specification says) or `http/json`. */
  protocol?: string | undefined;
  /** Tests: an exporter of their own instead of OTLP/HTTP. */
  exporter?: SpanExporter;
}

/**
 * Where a model call comes from: the route pattern (`/api/v1/generate`, `channel`, `run`…), the request's id
 * and, with tracing on, the trace context its spans are children of. Built once per request (callOrigin).
 */
export interface CallOrigin {
  route: string;
  requestId?: string | undefined;
  /** The parent of the call's span (the request's span, or a run step's); absent when tracing is off. */
  trace?: Context | undefined;
}

const propagator = new W3CTraceContextPropagator();
/**
 * The request's span, on a request property Fastify declares up front (decorateRequest): every request object
 * keeps one shape, where a property added afterwards would give the code reading requests two shapes to handle.
 */
const REQUEST_SPAN = 'codeloomSpan';
type Traced = FastifyRequest & { [REQUEST_SPAN]?: Span | null };

/**
 * OpenTelemetry traces, exported over OTLP/HTTP (JSON). Off when no endpoint is configured: `createTracing`
 * returns undefined, no hook is added and every call site tests one `undefined` (nothing is allocated).
 * No global context manager: parents are passed explicitly (a request's span to its model calls, a run's
 * to its steps), so no AsyncLocalStorage is installed on the hot path.
 */
export class Tracing {
  readonly tracer: Tracer;

  constructor(private readonly provider: BasicTracerProvider) {
    this.tracer = provider.getTracer('codeloom');
  }

  /** A span per HTTP request, continuing an incoming `traceparent`; ended with the answer's status. */
  register(app: FastifyInstance): void {
    app.decorateRequest(REQUEST_SPAN, null);
    app.addHook('onRequest', (request, _reply, done) => {
      // A caller's trace is continued; without a traceparent there is nothing to read.
      const parent = request.headers.traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
      const route = request.routeOptions.url ?? 'unmatched';
      (request as Traced)[REQUEST_SPAN] = this.tracer.startSpan(`${request.method} ${route}`, {
        kind: SpanKind.SERVER,
        attributes: { [ATTR_HTTP_REQUEST_METHOD]: request.method, [ATTR_HTTP_ROUTE]: route, [ATTR_URL_PATH]: pathOf(request.url), 'codeloom.request_id': request.id },
      }, parent);
      done();
    });
    app.addHook('onResponse', (request, reply, done) => {
      const span = (request as Traced)[REQUEST_SPAN];
      if (span) {
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, reply.statusCode);
        if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
      done();
    });
  }

  /** The context of a request's span (the parent of its model calls). */
  requestContext(request: FastifyRequest): Context | undefined {
    const span = (request as Traced)[REQUEST_SPAN];
    return span ? trace.setSpan(ROOT_CONTEXT, span) : undefined;
  }

  /** A span under `parent` (the root when none), and the context of its children. */
  start(name: string, parent: Context | undefined, attributes: Attributes, kind: SpanKind = SpanKind.INTERNAL): { span: Span; context: Context } {
    const span = this.tracer.startSpan(name, { kind, attributes }, parent ?? ROOT_CONTEXT);
    return { span, context: trace.setSpan(ROOT_CONTEXT, span) };
  }

  /** Exports what is still buffered and stops. */
  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }

  /** Exports what is buffered now (tests). */
  flush(): Promise<void> {
    return this.provider.forceFlush();
  }
}

/** The W3C `traceparent` naming a span (sent upstream so the provider's own trace joins ours). */
export function traceparentOf(span: Span): string {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** Records an error on a span: status ERROR, its code as `error.type`. */
export function failSpan(span: Span, code: string, message?: string): void {
  span.setAttribute('error.type', code);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) });
}

/** Tracing when an OTLP endpoint is configured, else undefined (off, costing nothing). */
export function createTracing(settings: TracingSettings): Tracing | undefined {
  const url = settings.tracesEndpoint ?? (settings.endpoint ? `${settings.endpoint.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (!url && !settings.exporter) return undefined;
  // OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME (envDetector), then the configured service name.
  const resource = defaultResource().merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName ?? 'codeloom' }));
  // The exporter reads OTEL_EXPORTER_OTLP_HEADERS / _TIMEOUT / _COMPRESSION itself; the batch processor OTEL_BSP_*; the provider OTEL_TRACES_SAMPLER.
  const exporter = settings.exporter ?? (settings.protocol === 'http/json' ? new OTLPJsonExporter({ url: url! }) : new OTLPProtoExporter({ url: url! }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  return new Tracing(provider);
}

/** Where a request's model calls come from (CallOrigin): its route pattern, its id, its span. */
export function callOrigin(request: FastifyRequest, route?: string): CallOrigin {
  const origin: CallOrigin = { route: route ?? request.routeOptions.url ?? 'unmatched', requestId: request.id };
  const span = (request as Traced)[REQUEST_SPAN];
  if (span) origin.trace = trace.setSpan(ROOT_CONTEXT, span);
  return origin;
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}
