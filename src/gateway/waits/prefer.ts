import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SagaRequest, SagaResult } from '../../core/types.js';
import type { StatusSource } from '../../core/messages.js';
import type { StreamRegistry } from '../stream/limits.js';

/**
 * `Prefer: wait=N` (RFC 7240 §4.3) on a one-shot request whose saga parks (issue 21): the
 * gateway holds the answer up to N seconds for the run's end, and answers with the end when it
 * comes in time (else the 202). The run's status is read every POLL_MS (its journal: any
 * replica's runner may resume it), or sooner when this process ran it (`ended`).
 */

/** The longest hold, whatever N says. */
export const MAX_PREFER_WAIT_S = 60;
const POLL_MS = 250;

/** N of a `Prefer` header's `wait=N`, clamped to MAX_PREFER_WAIT_S; undefined without one. */
export function preferredWait(header: string | string[] | undefined): number | undefined {
  const text = Array.isArray(header) ? header.join(',') : header;
  if (text === undefined || text.length > 1024) return undefined;
  for (const part of text.split(/[,;]/)) {
    const m = /^\s*wait\s*=\s*"?(\d{1,6})"?\s*$/i.exec(part);
    if (m) return Math.min(MAX_PREFER_WAIT_S, Number(m[1]));
  }
  return undefined;
}

/** Where a held request learns of the end: the status, and the local runs' end (embedded). */
export interface EndSource {
  status: StatusSource;
  /** the gateway's open streams: a held answer takes one of the client's slots while it is held */
  streams: StreamRegistry;
  /** subscribe to the end of runs resumed in this process; returns the unsubscribe */
  onEnded?(listener: (runId: string) => void): () => void;
}

/**
 * The run's end as a result, if it comes within `seconds`; undefined otherwise (or when the
 * client went away: `gone`).
 */
export async function awaitEnd(
  source: EndSource,
  scope: string,
  runId: string,
  seconds: number,
  gone: () => boolean,
): Promise<SagaResult | undefined> {
  const until = Date.now() + seconds * 1000;
  let wake: (() => void) | undefined;
  const off = source.onEnded?.((id) => {
    if (id === runId) wake?.();
  });
  try {
    while (Date.now() < until && !gone()) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, Math.min(POLL_MS, Math.max(0, until - Date.now())));
      });
      const status = await source.status.lookup(scope, runId).catch(() => undefined);
      if (status && status.status === 'DONE' && 'outcome' in status && status.outcome !== undefined) {
        const s = status as {
          outcome: SagaResult['outcome'];
          http?: number;
          response?: unknown;
          error?: SagaResult['error'];
        };
        return {
          outcome: s.outcome,
          http: s.http ?? 200,
          response: s.response,
          ...(s.error ? { error: s.error } : {}),
          runId,
        };
      }
    }
    return undefined;
  } finally {
    off?.();
  }
}

/** The parked run's end when `Prefer: wait=N` asks for it and it comes in time, else `result` (route.ts). */
export async function held(
  ends: EndSource,
  request: FastifyRequest,
  reply: FastifyReply,
  req: SagaRequest,
  result: SagaResult,
  gone: () => boolean,
): Promise<SagaResult> {
  const seconds = preferredWait(request.headers['prefer']);
  if (seconds === undefined || seconds === 0) return result;
  // A held answer is an open connection whose status is read 4 times a second, like a stream:
  // it counts against gateway.stream.maxPerClient and maxStreams. Past them the preference is
  // not applied (RFC 7240 lets a server ignore it): the 202 goes at once, without the header.
  const client = req.caller ?? '';
  if (ends.streams.admit(client) !== undefined) return result;
  try {
    reply.header('preference-applied', `wait=${seconds}`);
    const end = await awaitEnd(ends, client, result.runId ?? req.requestId, seconds, gone);
    return end ?? result;
  } finally {
    ends.streams.release(client);
  }
}

/** The end source of a gateway (server.ts): its status source, and its process's waits. */
export function endSource(
  options: {
    status?: StatusSource;
    waits?: { onEnded?(l: (runId: string) => void): () => void };
  },
  streams: StreamRegistry,
): EndSource | undefined {
  if (options.status === undefined) return undefined;
  const waits = options.waits;
  return {
    status: options.status,
    streams,
    ...(waits?.onEnded ? { onEnded: (l: (runId: string) => void) => waits.onEnded!(l) } : {}),
  };
}
