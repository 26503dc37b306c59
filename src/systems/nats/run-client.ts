import type { Msg } from '@nats-io/transport-node';
import { SagawayError, toErrorInfo } from '../../core/errors.js';
import type { SagaRequest, SagaResult } from '../../core/types.js';
import { classifyRequestError, type NatsErrorTypes } from './errors.js';
import type { Names } from './names.js';
import type { RequestMux } from './request-mux.js';
import { decode, encode, failResult, runWire } from './wire.js';
import { traceHeaders } from './trace-headers.js';

/**
 * The gateway's side of the nats system: a saga request to any live replica of a runner over
 * core NATS request/reply (the runner's side is serve.ts). The connection's state is handed in,
 * so that this file holds the protocol and nats.ts the connection.
 */

/** What a request needs from the connection. */
export interface RunConnection {
  /** the connection's one reply subscription (request-mux.ts) */
  mux: RequestMux;
  names: Names;
  maxPayload: number;
  /** how long past the saga's deadline to wait for the runner's answer */
  runGraceMs: number;
  errorTypes: NatsErrorTypes | undefined;
  /** requests waiting for an answer: failed at once when the connection drops */
  inFlight: Set<(reason: Error) => void>;
  /** the processes of `runner` that advertise themselves now (directory.ts) */
  liveInstances?(runner: string): Set<string>;
}

/** How often, from the deadline on, a request checks whether a replica of its runner died. */
const GONE_CHECK_MS = 250;

/** Run a saga on `runner` and answer its result; never rejects. */
export async function runOverNats(conn: RunConnection, runner: string, req: SagaRequest): Promise<SagaResult> {
  const deadline = req.deadline ?? Date.now() + 30_000;
  let data: Uint8Array;
  try {
    data = encode(runWire(req, deadline), conn.maxPayload, 'request');
  } catch (err) {
    return { ...failResult(toErrorInfo(err)), ran: 'none' };
  }
  try {
    let fail!: (reason: Error) => void;
    const lost = new Promise<never>((_, reject) => (fail = reject));
    conn.inFlight.add(fail);
    const stopWatch = watchReplicas(conn, runner, deadline, fail);
    let msg: Msg;
    try {
      msg = await Promise.race([
        conn.mux.request(
          conn.names.run(runner),
          data,
          Math.max(1, deadline - Date.now() + conn.runGraceMs),
          // tracing: the request's context in the message headers (trace-headers.ts)
          req.trace && traceHeaders(req.trace),
        ),
        lost,
      ]);
    } finally {
      conn.inFlight.delete(fail);
      stopWatch();
    }
    const result = decode(msg.data);
    if (!result || typeof result['outcome'] !== 'string' || typeof result['http'] !== 'number') {
      return failResult({ code: 'INTERNAL', message: 'the runner sent an unreadable answer', http: 502 });
    }
    const { v: _v, ...rest } = result;
    return rest as unknown as SagaResult;
  } catch (err) {
    // Whether a runner took the request (issue 26 item 2): only "no responders" (the server
    // itself says no replica is subscribed) proves that none did. A lost connection or a missing
    // answer may hide a run that goes on: its outcome is the one at /api/status.
    const failure = err instanceof ReplicaGone ? 'timeout' : classifyRequestError(err, conn.errorTypes);
    if (failure === 'no-responders') return { ...unavailable(`runner "${runner}" is not running`), ran: 'none' };
    if (failure === 'timeout') {
      return {
        ran: 'unknown',
        outcome: 'TIMEOUT',
        http: 504,
        error: {
          code: 'SAGA_TIMEOUT',
          message: 'no answer from the runner in time; the outcome can be read at /api/status/<requestId>',
          http: 504,
        },
      };
    }
    if (failure === 'connection-lost') {
      return {
        ...unavailable(
          `the connection to runner "${runner}" was lost; the outcome can be read at /api/status/<requestId>`,
        ),
        ran: 'unknown',
      };
    }
    return { ...unavailable(`runner "${runner}" could not be reached`), ran: 'unknown' };
  }
}

/** A replica of the runner died while the request waited: its answer will not come. */
class ReplicaGone extends Error {}

/**
 * The gateway waits for a runner's answer until the saga's deadline plus `runGrace` (the answer
 * of a run that ended at its deadline is still on its way). A replica killed with the run never
 * answers, so its caller would wait the grace for nothing (issue 26: 12 s for a 10 s saga).
 * From the deadline on, a process of the runner that was live when the request was sent and is
 * gone now ends the wait at once with the same 504: the run had its whole timeout, it is resumed
 * from the journal if it has one, and /api/status tells how it ended. Which replica took the
 * request is not known (a queue group picks it), so a run on a surviving replica that ends in the
 * grace is answered 504 too; its outcome is at /api/status all the same.
 */
function watchReplicas(conn: RunConnection, runner: string, deadline: number, fail: (e: Error) => void): () => void {
  const before = conn.liveInstances?.(runner);
  if (!before || before.size === 0) return () => undefined;
  let timer: NodeJS.Timeout | undefined;
  const check = (): void => {
    const now = conn.liveInstances!(runner);
    for (const instance of before) {
      if (!now.has(instance)) {
        fail(new ReplicaGone('a replica of the runner is gone'));
        return;
      }
    }
    timer = setTimeout(check, GONE_CHECK_MS);
    timer.unref();
  };
  timer = setTimeout(check, Math.max(0, deadline - Date.now()));
  timer.unref();
  return () => clearTimeout(timer);
}

/** A FAIL result with RUNNER_UNAVAILABLE (503). */
export function unavailable(message: string): SagaResult {
  return failResult(toErrorInfo(new SagawayError('RUNNER_UNAVAILABLE', message)));
}
