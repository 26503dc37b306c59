import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics of one gateway, on its own Registry (two gateways in one process, as in
 * tests, do not collide). Label values are bounded: `route` is one of a few names and `api` is a
 * configured API prefix, never a raw request path.
 */

/** Route names used as metric labels. */
export type RouteLabel = 'request' | 'stream' | 'ops' | 'static' | 'none';

/** The gateway's metrics. */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'route' | 'api' | 'status'>;
  private readonly latency: Histogram<'route'>;
  readonly activeStreams: Gauge;
  readonly polls: Counter;
  readonly events: Counter;
  readonly bytes: Counter;
  readonly resumes: Counter;
  readonly rejected: Counter<'code'>;
  private readonly requestChildren = new Map<string, Counter.Internal>();
  private readonly latencyChildren = new Map<string, Histogram.Internal<'route'>>();

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'sagaway_http_requests_total',
      help: 'HTTP requests by route, API prefix and status',
      labelNames: ['route', 'api', 'status'],
      registers,
    });
    this.latency = new Histogram({
      name: 'sagaway_http_request_duration_seconds',
      help: 'time to the end of the response (stream responses: time to the headers)',
      labelNames: ['route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.activeStreams = new Gauge({ name: 'sagaway_streams_active', help: 'open SSE streams', registers });
    this.polls = new Counter({ name: 'sagaway_stream_polls_total', help: 'saga runs made by stream loops', registers });
    this.events = new Counter({
      name: 'sagaway_stream_events_total',
      help: 'SSE events sent (entries, end, error)',
      registers,
    });
    this.bytes = new Counter({ name: 'sagaway_stream_bytes_total', help: 'bytes written to SSE streams', registers });
    this.resumes = new Counter({
      name: 'sagaway_stream_resumes_total',
      help: 'streams resumed from a cursor',
      registers,
    });
    this.rejected = new Counter({
      name: 'sagaway_stream_rejected_total',
      help: 'streams refused by limits (TOO_MANY_STREAMS is a 429, STREAMS_EXHAUSTED a 503)',
      labelNames: ['code'],
      registers,
    });
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** Count one finished request and its latency. */
  observeRequest(route: RouteLabel, api: string, status: number, seconds: number): void {
    const key = `${route} ${status} ${api}`;
    let counter = this.requestChildren.get(key);
    if (!counter) {
      counter = this.requests.labels(route, api, String(status));
      this.requestChildren.set(key, counter);
    }
    counter.inc();
    let hist = this.latencyChildren.get(route);
    if (!hist) {
      hist = this.latency.labels(route);
      this.latencyChildren.set(route, hist);
    }
    hist.observe(seconds);
  }
}
