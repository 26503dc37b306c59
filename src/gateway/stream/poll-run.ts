import type { Cancel } from '../../core/cancel.js';
import { toErrorInfo } from '../../core/errors.js';
import type { Principal, SagaRequest, SagaResult } from '../../core/types.js';
import type { GroupScope } from './group-registry.js';
import type { StreamShared } from './member.js';

/**
 * One poll of a stream saga: the saga request both stream forms make (the SSE loop's poll
 * group, group.ts, and the long-poll form's spots, long-poll.ts) and its accounting. Never
 * throws: a failure of the service is a FAIL result, as the runner's own failures are.
 */

/** Who a poll runs for: the request that started it (its id names the runs), and its caller. */
export interface PollOwner {
  requestId: string;
  principal: Principal;
  client: string;
}

/** Run the saga of `scope` once with `previous` (undefined: the first poll), as run `runId`, aborted by `cancel`. */
export async function runStreamPoll(
  shared: StreamShared,
  scope: GroupScope,
  owner: PollOwner,
  previous: unknown,
  runId: string,
  cancel: Cancel,
): Promise<SagaResult> {
  const { service, metrics, timeoutMs } = shared;
  const req: SagaRequest = {
    method: scope.method,
    path: scope.path,
    input: previous === undefined ? scope.input : { ...scope.input, previous },
    query: scope.query,
    requestId: owner.requestId,
    // every poll is a run of its own: its idempotency keys must not collide with the last poll's
    runId,
    form: 'stream', // waits: a saga with a wait step refuses a poll (WAIT_NOT_STREAMABLE)
    // `all`: one run serves every caller, so it runs as nobody ($user and @.user are empty).
    user: scope.anonymous ? null : owner.principal,
    ...(scope.anonymous ? {} : { caller: owner.client }),
    deadline: Date.now() + timeoutMs,
    cancel,
    get signal(): AbortSignal {
      return cancel.signal;
    },
  };
  metrics.polls.inc();
  metrics.streamRuns++;
  try {
    return await service.run(scope.runner, req);
  } catch (err) {
    return { outcome: 'FAIL', http: 500, error: toErrorInfo(err) };
  } finally {
    metrics.streamRuns--;
  }
}
