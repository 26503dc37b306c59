import type { Context, Link, Span, SpanOptions } from '@opentelemetry/api';
import {
  carrierOf,
  type ActionStart,
  type OtelSpan,
  type RequestSpan,
  type RequestStart,
  type RunSpan,
  type RunStart,
  type StepSpan,
  type TraceCarrier,
  type Tracing,
} from '../../core/otel.js';
import type { ResolvedTracing } from './config.js';

/** Options of the tracer (tests export to their own receiver quickly). */
export interface SdkOptions {
  /** sagaway's version (service.version) */
  version?: string;
  /** how often buffered spans are exported; default OTEL_BSP_SCHEDULE_DELAY, else the SDK's 5 s */
  exportDelayMs?: number;
}

/**
 * The OpenTelemetry SDK behind core/otel.ts's Tracing: spans made with `@opentelemetry/sdk-trace-base`,
 * exported in batches over OTLP/HTTP (JSON) by `@opentelemetry/exporter-trace-otlp-http`, W3C
 * context read and written by `@opentelemetry/core`'s propagator. Every package is imported
 * here, when tracing starts, and nowhere else. Attribute names follow the OpenTelemetry
 * semantic conventions for HTTP servers; sagaway's own are under `sagaway.`.
 */
export async function startTracing(config: ResolvedTracing, options: SdkOptions = {}): Promise<Tracing> {
  const api = await import('@opentelemetry/api');
  const { W3CTraceContextPropagator } = await import('@opentelemetry/core');
  const { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } =
    await import('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');

  const exporter = new OTLPTraceExporter({ url: config.url, headers: { ...config.headers } });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': config.serviceName,
      ...(options.version ? { 'service.version': options.version } : {}),
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
    spanProcessors: [
      new BatchSpanProcessor(exporter, options.exportDelayMs ? { scheduledDelayMillis: options.exportDelayMs } : {}),
    ],
  });
  const tracer = provider.getTracer('sagaway', options.version);
  const propagator = new W3CTraceContextPropagator();
  const { SpanKind, SpanStatusCode, ROOT_CONTEXT, trace } = api;

  const getter = {
    keys: (c: Record<string, unknown>) => Object.keys(c),
    get: (c: Record<string, unknown>, key: string) => {
      const v = c[key];
      return typeof v === 'string' || Array.isArray(v) ? (v as string | string[]) : undefined;
    },
  };
  const setter = { set: (c: Record<string, string>, key: string, value: string) => void (c[key] = value) };
  const contextOf = (carrier: TraceCarrier | Readonly<Record<string, unknown>> | undefined): Context =>
    carrier === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, carrier, getter);
  const carrierFor = (span: Span): TraceCarrier | undefined => {
    const out: Record<string, string> = {};
    propagator.inject(trace.setSpan(ROOT_CONTEXT, span), out, setter);
    return carrierOf(out['traceparent'], out['tracestate']);
  };
  /** End a span with an outcome: a failure's status carries its code, never its message. */
  const finish = (span: Span, outcome: string, code: string | undefined): void => {
    span.setAttribute('sagaway.outcome', outcome);
    if (code !== undefined) span.setAttribute('error.type', code);
    if (outcome === 'FAIL' || outcome === 'TIMEOUT')
      span.setStatus({ code: SpanStatusCode.ERROR, message: code ?? outcome });
    span.end();
  };
  const otelSpan = (span: Span): OtelSpan => {
    const carrier = carrierFor(span);
    return { carrier, end: (outcome, code) => finish(span, outcome, code) };
  };

  return {
    request(start: RequestStart): RequestSpan {
      // A caller's traceparent is honoured (the propagator drops a malformed one: a new trace then).
      const parent = contextOf(start.headers);
      const ua = start.headers['user-agent'];
      const span = tracer.startSpan(
        start.method,
        {
          kind: SpanKind.SERVER,
          attributes: {
            'http.request.method': start.method,
            'url.path': start.path.slice(0, 2048),
            'url.scheme': start.scheme,
            'network.protocol.version': start.httpVersion,
            'sagaway.request_id': start.requestId,
            ...(typeof ua === 'string' ? { 'user_agent.original': ua.slice(0, 256) } : {}),
          },
        },
        parent,
      );
      const carrier = carrierFor(span);
      return {
        carrier,
        end(status, route) {
          if (route !== undefined) {
            span.updateName(`${start.method} ${route}`);
            span.setAttribute('http.route', route);
          }
          span.setAttribute('http.response.status_code', status);
          // HTTP server conventions: only 5xx marks a server span as failed.
          if (status >= 500) {
            span.setAttribute('error.type', String(status));
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
          span.end();
        },
      };
    },

    run(start: RunStart): RunSpan {
      const options: SpanOptions = {
        kind: SpanKind.INTERNAL,
        attributes: {
          'sagaway.saga': start.saga,
          'sagaway.run_id': start.runId,
          'sagaway.runner': start.runner,
          'sagaway.run.start': start.kind,
        },
      };
      // A run picked up again (after a wait, a crash, a redrive) starts a trace of its own, linked
      // to its first: one trace per long run grows past what trace UIs can show.
      const linked = start.link && trace.getSpanContext(contextOf(start.link));
      if (linked) {
        const link: Link = { context: linked, attributes: { 'sagaway.link': 'first-trace' } };
        options.links = [link];
        options.root = true;
      }
      const span = tracer.startSpan(`saga ${start.saga}`, options, linked ? ROOT_CONTEXT : contextOf(start.parent));
      const runContext = trace.setSpan(ROOT_CONTEXT, span);
      const base = otelSpan(span);
      return {
        ...base,
        step(id, kind): StepSpan {
          const step = tracer.startSpan(
            `step ${id}`,
            { kind: SpanKind.INTERNAL, attributes: { 'sagaway.step': id, 'sagaway.step.kind': kind } },
            runContext,
          );
          return {
            ...otelSpan(step),
            tried(attempt, status, code) {
              step.addEvent('try', {
                'sagaway.retry.attempt': attempt,
                'sagaway.outcome': status,
                ...(code !== undefined ? { 'error.type': code } : {}),
              });
              step.setAttribute('sagaway.retry.attempts', attempt);
            },
          };
        },
      };
    },

    action(start: ActionStart): OtelSpan {
      const span = tracer.startSpan(
        `action ${start.handler !== undefined ? `${start.handler}.` : ''}${start.action}`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            'sagaway.handler': start.handler ?? '',
            'sagaway.action': start.action,
            'sagaway.action.version': start.version,
            'sagaway.retry.attempt': start.attempt,
            'sagaway.step': start.step,
            'sagaway.run_id': start.runId,
            'sagaway.stream': start.stream,
            'sagaway.runner': start.runner,
          },
        },
        contextOf(start.parent),
      );
      return otelSpan(span);
    },

    shutdown: () => provider.shutdown(),
  };
}
