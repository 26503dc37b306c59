import type { FastifyReply, FastifyRequest } from 'fastify';
import { Cancel } from '../../core/cancel.js';
import { callerKey } from '../../core/caller.js';
import { toErrorInfo } from '../../core/errors.js';
import type { TraceCarrier } from '../../core/otel.js';
import type { Principal, SagaRequest, SagaResult } from '../../core/types.js';
import type { GatewayContext } from '../context.js';
import { negotiate } from '../formats/index.js';
import { bodyInput, usesBody } from './input.js';
import { sendResult } from './respond.js';
import type { IdempotencyKeys } from './idempotency-key.js';
import type { InputChecks } from './validate-input.js';
import { problemFor, sendProblem } from '../http/helpers/problem.js';
import { correlationIdOf } from '../http/helpers/request-id.js';
import { held, type EndSource } from '../waits/prefer.js'; // waits:

/**
 * The one-shot form (`/api/request/<path>`, DESIGN §8): one saga run, one response in the
 * negotiated format, at most `gateway.limits.maxResponse` bytes (else 502 RESPONSE_TOO_LARGE).
 * Errors are always problem+json. When the client disconnects, the run's
 * signal is aborted, unless the request holds an Idempotency-Key (`keys`): that run goes on,
 * so that its outcome is stored for the client's retry.
 */
export function requestHandler(
  ctx: GatewayContext,
  keys?: IdempotencyKeys,
  inputs?: InputChecks,
  ends?: EndSource, // waits:
) {
  const maxResponse = ctx.settings.limits.maxResponse;
  return async function handle(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const admitted = request.sagaway!;
    const format = negotiate(admitted.sagaPath.extension, request.headers.accept);
    if (format === null) return sendProblem(reply, problemFor('NOT_ACCEPTABLE', request.id, 'no acceptable format'));
    const query = request.query as Record<string, unknown>;
    const input = usesBody(request.method) ? bodyInput(request.body) : query;
    const invalid = inputs?.check(request, input);
    if (invalid) return sendProblem(reply, invalid);
    // Checked before awaiting: a request without the header costs no promise here.
    let keyed = false;
    if (keys !== undefined && request.headers['idempotency-key'] !== undefined) {
      if (!(await keys.begin(request, reply, admitted, format))) return reply;
      keyed = keys.holdsKey(request);
    }

    // Cancelled when the client goes away; an AbortSignal is made only if something asks for it.
    const cancel = new Cancel();
    let gone = false;
    const res = reply.raw;
    // `on`, not `once`: a response closes once, and `once` wraps the listener in two more objects
    res.on('close', () => {
      if (res.writableFinished || keyed) return;
      gone = true;
      cancel.abort();
    });
    const req = new OneShotRequest(
      request.method,
      admitted.sagaPath.path,
      input,
      query,
      request.id,
      admitted.principal,
      // the scope of the run's status record, and the client's own id to find it by (request-id.ts)
      callerKey(admitted.principal, request.ip),
      correlationIdOf(request.headers),
      Date.now() + ctx.settings.limits.timeoutMs,
      cancel,
    );
    // tracing (docs/tracing.md): the run is a child of this request's span
    if (request.otel?.carrier !== undefined) req.trace = request.otel.carrier;
    let result: SagaResult;
    try {
      result = await ctx.service.run(admitted.api.settings.runner, req);
    } catch (err) {
      request.log.error({ err }, 'saga service failed');
      result = { outcome: 'FAIL', http: 500, error: toErrorInfo(err) };
    }
    // waits: `Prefer: wait=N` holds a parked run's answer up to N s for its end (gateway/waits/prefer.ts)
    if (result.outcome === 'WAITING' && ends !== undefined)
      result = await held(ends, request, reply, req, result, () => gone);
    if (keyed) keys!.noteResult(request, result);
    if (gone) return reply;
    return sendResult(reply, request.id, admitted, format, result, maxResponse);
  };
}

/**
 * The SagaRequest of a one-shot request. A class, so that `signal` (for a SagaService that is not
 * a runner of this process: they read the signal) is a getter of the prototype, not a closure
 * made per request.
 */
class OneShotRequest implements SagaRequest {
  /** one request, one run: the run's id (idempotency keys, logs) is the X-Request-Id */
  readonly runId: string;
  /** tracing: the request span's context, set only while tracing is on */
  trace?: TraceCarrier;

  constructor(
    readonly method: string,
    readonly path: string,
    readonly input: Record<string, unknown>,
    readonly query: Record<string, unknown>,
    readonly requestId: string,
    readonly user: Principal,
    readonly caller: string,
    readonly correlationId: string | undefined,
    readonly deadline: number,
    readonly cancel: Cancel,
  ) {
    this.runId = requestId;
  }

  get signal(): AbortSignal {
    return this.cancel.signal;
  }
}
