import type { MsgHdrs } from '@nats-io/transport-node';
import { carrierOf, type TraceCarrier } from '../../core/otel.js';

/**
 * W3C trace context in NATS message headers (docs/tracing.md): `traceparent` and `tracestate`,
 * as OpenTelemetry's messaging conventions carry them, on gateway -> runner requests and on
 * events. Headers are written only for a traced run: an untraced message has none.
 */

/** nats.js's header factory, handed over when the client module is loaded (system.ts). */
let make: (() => MsgHdrs) | undefined;

export function useHeaderFactory(factory: () => MsgHdrs): void {
  make = factory;
}

/** The headers that carry `carrier`. */
export function traceHeaders(carrier: TraceCarrier): MsgHdrs | undefined {
  if (make === undefined) return undefined;
  const h = make();
  h.set('traceparent', carrier.traceparent);
  if (carrier.tracestate !== undefined) h.set('tracestate', carrier.tracestate);
  return h;
}

/** The trace context a received message carries, checked (a malformed one is dropped). */
export function traceOf(headers: MsgHdrs | undefined): TraceCarrier | undefined {
  if (headers === undefined) return undefined;
  const parent = headers.get('traceparent');
  return parent === '' ? undefined : carrierOf(parent, headers.get('tracestate'));
}
