import type { NoRespondersError, RequestError, TimeoutError } from '@nats-io/transport-node';
import { MuxRequestError } from './request-mux.js';

/**
 * Why a gateway -> runner request over NATS failed, decided by the error's type (never by its
 * message text, which the client library may reword in any release).
 */
export type RequestFailure = 'no-responders' | 'timeout' | 'connection-lost' | 'other';

/** Our own: the connection dropped while the request waited (the runner may still finish it). */
export class ConnectionLostError extends Error {
  constructor() {
    super('connection lost');
    this.name = 'ConnectionLostError';
  }
}

/** The client library's error classes (it is loaded lazily, so they are handed over once connected). */
export interface NatsErrorTypes {
  RequestError: typeof RequestError;
  TimeoutError: typeof TimeoutError;
  NoRespondersError: typeof NoRespondersError;
}

/** Classify a failed request; a RequestError is classified by its cause. */
export function classifyRequestError(err: unknown, types: NatsErrorTypes | undefined): RequestFailure {
  if (err instanceof ConnectionLostError) return 'connection-lost';
  if (err instanceof MuxRequestError) return err.kind;
  if (types === undefined) return 'other';
  if (err instanceof types.NoRespondersError) return 'no-responders';
  if (err instanceof types.TimeoutError) return 'timeout';
  if (err instanceof types.RequestError) {
    if (err.isNoResponders()) return 'no-responders';
    return err.cause === undefined ? 'other' : classifyRequestError(err.cause, types);
  }
  return 'other';
}

/** Our own: the system has no connection (yet, or any more). */
export class NotConnectedError extends Error {
  constructor() {
    super('not connected');
    this.name = 'NotConnectedError';
  }
}
