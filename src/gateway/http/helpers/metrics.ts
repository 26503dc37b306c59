import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * Prometheus metrics of one gateway, on its own Registry (two gateways in one process, as in
 * tests, do not collide). The hot paths (every request, every SSE write) only bump plain
 * numbers; prom-client reads them when /metrics is scraped, through metric objects registered
 * with the registry. That keeps label hashing and validation off the request path. Label values
 * are bounded: `route` is one of a few names and `api` is a configured API prefix, never a raw
 * request path.
 */

/** Route names used as metric labels. */
export type RouteLabel = 'request' | 'stream' | 'ops' | 'static' | 'none';

type Labels = Record<string, string | number>;
interface Value {
  value: number;
  labels: Labels;
  metricName?: string;
}

/** What prom-client's Registry needs from a metric. */
interface Collectable {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; aggregator: 'sum'; values: Value[] }>;
}

function collectable(name: string, help: string, type: Collectable['type'], values: () => Value[]): Collectable {
  return {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
  };
}

/** A counter without labels. */
export class PlainCounter {
  value = 0;
  /** Add `n` (default 1). */
  inc(n = 1): void {
    this.value += n;
  }
}

/** A counter with labels, keyed by the joined label values. */
class LabelledCounter {
  readonly entries = new Map<string, Value>();
  inc(key: string, labels: () => Labels): void {
    const e = this.entries.get(key);
    if (e) e.value++;
    else this.entries.set(key, { value: 1, labels: labels() });
  }
}

/** A histogram per label value, with fixed buckets. */
class Histograms {
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(
    private readonly name: string,
    private readonly label: string,
    private readonly buckets: readonly number[],
  ) {}

  observe(labelValue: string, v: number): void {
    let s = this.series.get(labelValue);
    if (!s) {
      s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(labelValue, s);
    }
    for (let i = 0; i < this.buckets.length; i++) {
      if (v <= this.buckets[i]!) {
        s.counts[i]!++;
        break;
      }
    }
    s.sum += v;
    s.count++;
  }

  values(): Value[] {
    const out: Value[] = [];
    for (const [lv, s] of this.series) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.counts[i]!;
        out.push({ metricName: `${this.name}_bucket`, labels: { le, [this.label]: lv }, value: cumulative });
      });
      out.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', [this.label]: lv }, value: s.count });
      out.push({ metricName: `${this.name}_sum`, labels: { [this.label]: lv }, value: s.sum });
      out.push({ metricName: `${this.name}_count`, labels: { [this.label]: lv }, value: s.count });
    }
    return out;
  }
}

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The gateway's metrics. */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests = new LabelledCounter();
  private readonly latency = new Histograms('sagaway_http_request_duration_seconds', 'route', BUCKETS);
  /** open SSE streams */
  activeStreams = 0;
  /** timers armed by stream loops (heartbeat, wait, stall): each open stream holds one or two */
  streamTimers = 0;
  /** saga runs in flight on behalf of streams */
  streamRuns = 0;
  readonly polls = new PlainCounter();
  readonly events = new PlainCounter();
  readonly bytes = new PlainCounter();
  readonly resumes = new PlainCounter();
  /** SSE streams closed at gateway.stream.maxLifetime */
  readonly lifetimeCloses = new PlainCounter();
  private readonly rejected = new LabelledCounter();
  /** stream poll groups running (a stream that shares with nobody is a group of one) */
  streamGroups = 0;
  /** groups of two streams or more, and their streams */
  sharedGroups = 0;
  sharedMembers = 0;
  /** poll results delivered to streams: one per stream per poll, shared or not */
  readonly memberPolls = new PlainCounter();
  /** entries encoded as SSE events (once per poll) and written (once per stream) */
  readonly entriesEncoded = new PlainCounter();
  readonly entriesWritten = new PlainCounter();
  /** streams detached from a shared group because they did not keep up */
  readonly detached = new PlainCounter();

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const plain = (c: PlainCounter) => () => [{ value: c.value, labels: {} }];
    for (const m of [
      collectable('sagaway_http_requests_total', 'HTTP requests by route, API prefix and status', 'counter', () => [
        ...this.requests.entries.values(),
      ]),
      collectable(
        'sagaway_http_request_duration_seconds',
        'time to the end of the response (stream responses: time to the headers)',
        'histogram',
        () => this.latency.values(),
      ),
      collectable('sagaway_streams_active', 'open SSE streams', 'gauge', () => [
        { value: this.activeStreams, labels: {} },
      ]),
      collectable('sagaway_stream_timers', 'timers armed by stream loops (heartbeat, wait, stall)', 'gauge', () => [
        { value: this.streamTimers, labels: {} },
      ]),
      collectable('sagaway_stream_runs_in_flight', 'saga runs in flight for streams', 'gauge', () => [
        { value: this.streamRuns, labels: {} },
      ]),
      collectable('sagaway_stream_polls_total', 'saga runs made by stream loops', 'counter', plain(this.polls)),
      collectable(
        'sagaway_stream_events_total',
        'SSE events sent (entries, end, error)',
        'counter',
        plain(this.events),
      ),
      collectable('sagaway_stream_bytes_total', 'bytes written to SSE streams', 'counter', plain(this.bytes)),
      collectable('sagaway_stream_resumes_total', 'streams resumed from a cursor', 'counter', plain(this.resumes)),
      collectable(
        'sagaway_stream_lifetime_closes_total',
        'SSE streams closed at gateway.stream.maxLifetime (they resume with their id)',
        'counter',
        plain(this.lifetimeCloses),
      ),
      collectable('sagaway_stream_groups', 'stream poll groups running (one saga run per poll each)', 'gauge', () => [
        { value: this.streamGroups, labels: {} },
      ]),
      collectable('sagaway_stream_shared_groups', 'poll groups that serve two streams or more', 'gauge', () => [
        { value: this.sharedGroups, labels: {} },
      ]),
      collectable('sagaway_stream_shared_members', 'streams served by a poll group of two or more', 'gauge', () => [
        { value: this.sharedMembers, labels: {} },
      ]),
      collectable(
        'sagaway_stream_member_polls_total',
        'poll results delivered to streams; sagaway_stream_polls_total / this = saga runs per stream poll',
        'counter',
        plain(this.memberPolls),
      ),
      collectable(
        'sagaway_stream_entries_encoded_total',
        'list entries encoded as SSE events (once per poll, whatever the number of streams served)',
        'counter',
        plain(this.entriesEncoded),
      ),
      collectable(
        'sagaway_stream_entries_written_total',
        'list entries written to streams (once per stream served)',
        'counter',
        plain(this.entriesWritten),
      ),
      collectable(
        'sagaway_stream_detached_total',
        'streams detached from a shared poll group because their socket did not keep up',
        'counter',
        plain(this.detached),
      ),
      collectable(
        'sagaway_stream_rejected_total',
        'streams refused by limits (TOO_MANY_STREAMS is a 429, STREAMS_EXHAUSTED a 503)',
        'counter',
        () => [...this.rejected.entries.values()],
      ),
    ]) {
      this.registry.registerMetric(m as unknown as Parameters<Registry['registerMetric']>[0]);
    }
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry });
  }

  private readonly requestIndex = new Map<string, Map<string, Map<number, Value>>>();

  /** Count one finished request and its latency (no string is built on this path). */
  observeRequest(route: RouteLabel, api: string, status: number, seconds: number): void {
    let byApi = this.requestIndex.get(route);
    if (!byApi) this.requestIndex.set(route, (byApi = new Map()));
    let byStatus = byApi.get(api);
    if (!byStatus) byApi.set(api, (byStatus = new Map()));
    const entry = byStatus.get(status);
    if (entry) entry.value++;
    else {
      const value: Value = { value: 1, labels: { route, api, status: String(status) } };
      byStatus.set(status, value);
      this.requests.entries.set(`${route} ${status} ${api}`, value);
    }
    this.latency.observe(route, seconds);
  }

  /** Count a stream refused by a limit. */
  reject(code: string): void {
    this.rejected.inc(code, () => ({ code }));
  }
}
