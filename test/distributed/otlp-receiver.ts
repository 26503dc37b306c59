import { createServer, type Server } from 'node:http';

/**
 * A small OTLP/HTTP receiver for tests: it takes `POST /v1/traces` in the OTLP JSON encoding
 * (what `@opentelemetry/exporter-trace-otlp-http` sends) and keeps every span with its
 * service, so a test can check a trace's shape the way Jaeger or Tempo would draw it.
 */

/** A received span, flattened. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer */
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  /** OTLP status code: 0 unset, 1 ok, 2 error */
  status: number;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

function valueOf(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  return v.doubleValue;
}

function attrs(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) out[kv.key] = valueOf(kv.value);
  return out;
}

/** Ids are hex in OTLP JSON; base64 (the protobuf mapping) is turned into hex too. */
function hexId(id: string | undefined): string | undefined {
  if (id === undefined || id === '') return undefined;
  return /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** every request's headers (a test checks what the exporter sends) */
  readonly requests: Record<string, string | string[] | undefined>[] = [];
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    const self: { receiver?: OtlpReceiver } = {};
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        self.receiver?.requests.push(req.headers);
        if (req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
          res.writeHead(415).end();
          return;
        }
        try {
          self.receiver?.take(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } catch {
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = server.address();
    self.receiver = new OtlpReceiver(server, typeof address === 'object' && address ? address.port : 0);
    return self.receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private take(body: {
    resourceSpans?: {
      resource?: { attributes?: KeyValue[] };
      scopeSpans?: {
        spans?: {
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          kind: number;
          attributes?: KeyValue[];
          links?: { traceId: string; spanId: string }[];
          status?: { code?: number };
        }[];
      }[];
    }[];
  }): void {
    for (const rs of body.resourceSpans ?? []) {
      const service = String(attrs(rs.resource?.attributes)['service.name']);
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans ?? [])
          this.spans.push({
            service,
            traceId: hexId(s.traceId)!,
            spanId: hexId(s.spanId)!,
            parentSpanId: hexId(s.parentSpanId),
            name: s.name,
            kind: s.kind,
            attributes: attrs(s.attributes),
            links: (s.links ?? []).map((l) => ({ traceId: hexId(l.traceId)!, spanId: hexId(l.spanId)! })),
            status: s.status?.code ?? 0,
          });
    }
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}
