import type { FastifyReply, FastifyRequest } from 'fastify';
import { Cancel } from '../../core/cancel.js';
import { callerKey } from '../../core/caller.js';
import { toErrorInfo } from '../../core/errors.js';
import type { TraceCarrier } from '../../core/otel.js';
import type { Principal, SagaRequest, SagaResult } from '../../core/types.js';
import type { Format } from '../apis/saga-path.js';
import type { Admitted } from '../forms/admit.js';
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

  /**
   * Run the saga and answer. Never rejects: a failed service is a 500 problem, and an error
   * while answering goes to fastify's error handler (reply.send(err)), as a handler's would.
   */
  function runAndAnswer(
    request: FastifyRequest,
    reply: FastifyReply,
    admitted: Admitted,
    format: Format,
    input: Record<string, unknown>,
    query: Record<string, unknown>,
    keyed: boolean,
  ): Promise<void> {
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
    const answer = (result: SagaResult): void | Promise<void> => {
      // waits: `Prefer: wait=N` holds a parked run's answer up to N s for its end (gateway/waits/prefer.ts)
      if (result.outcome === 'WAITING' && ends !== undefined)
        return held(ends, request, reply, req, result, () => gone).then(send, failed);
      send(result);
    };
    const send = (result: SagaResult): void => {
      try {
        if (keyed) keys!.noteResult(request, result);
        if (!gone) sendResult(reply, request.id, admitted, format, result, maxResponse);
      } catch (err) {
        failed(err);
      }
    };
    const failed = (err: unknown): void => {
      if (!reply.sent) reply.send(err instanceof Error ? err : new Error(String(err)));
    };
    return ctx.service.run(admitted.api.settings.runner, req).then(answer, (err: unknown) => {
      request.log.error({ err }, 'saga service failed');
      return answer({ outcome: 'FAIL', http: 500, error: toErrorInfo(err) });
    });
  }

  /** A request with an Idempotency-Key: the key is taken (or the request answered) first. */
  async function keyedRun(
    request: FastifyRequest,
    reply: FastifyReply,
    admitted: Admitted,
    format: Format,
    input: Record<string, unknown>,
    query: Record<string, unknown>,
  ): Promise<FastifyReply> {
    if (await keys!.begin(request, reply, admitted, format))
      await runAndAnswer(request, reply, admitted, format, input, query, keys!.holdsKey(request));
    return reply;
  }

  // Not async: a request without an Idempotency-Key answers from the run's own reaction, and the
  // handler returns nothing (fastify then waits for reply.send), which saves the handler's
  // promise, its adoption of the thenable reply and fastify's reaction to it (issue 23).
  return function handle(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> | undefined {
    const admitted = request.sagaway!;
    const format = negotiate(admitted.sagaPath.extension, request.headers.accept);
    if (format === null) {
      sendProblem(reply, problemFor('NOT_ACCEPTABLE', request.id, 'no acceptable format'));
      return undefined;
    }
    const query = request.query as Record<string, unknown>;
    const input = usesBody(request.method) ? bodyInput(request.body) : query;
    const invalid = inputs?.check(request, input);
    if (invalid) {
      sendProblem(reply, invalid);
      return undefined;
    }
    if (keys !== undefined && request.headers['idempotency-key'] !== undefined)
      return keyedRun(request, reply, admitted, format, input, query);
    void runAndAnswer(request, reply, admitted, format, input, query, false);
    return undefined;
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
