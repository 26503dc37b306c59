import { hash as digest } from 'node:crypto';
import { SagawayError, toErrorInfo } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { State } from '../../states/state.js';

/**
 * The correlation index of the saga journal: the client's own `X-Request-Id` (the correlation
 * id) points, in the caller's scope, at the first run that carried it. Run ids are made by the
 * gateway and never repeat; a correlation id is the client's and may, so it gets an index record
 * of its own, written once (issue 9 item 4: a client-chosen id used to replace a running record).
 */

/** The `status` of an index record: the journal's scans tell it from a run's by this. */
export const INDEX_STATUS = 'INDEX';

/** Record id of a correlation id's index entry, in the caller's scope (never equal to a run's). */
export function correlationIndexId(scope: string, id: string): string {
  return `cor-${digest('sha256', `c\n${scope}\n${id}`, 'hex').slice(0, 40)}`;
}

/** The run an index entry points at, and who wrote it (the retention pass reads `startedAt`). */
export interface CorrelationEntry {
  requestId: string;
  runner: string;
  deployment: string;
  startedAt: number;
}

/**
 * Point the caller's correlation id at this run, unless an earlier run of the caller has it
 * (first wins). Never rejects: the run is recorded anyway, only the lookup by correlation id is
 * lost, and that is logged.
 */
export async function indexCorrelation(
  state: State,
  log: Logger,
  scope: string,
  correlation: string,
  entry: CorrelationEntry,
): Promise<void> {
  try {
    const { requestId, runner, deployment, startedAt } = entry;
    await state.create(correlationIndexId(scope, correlation), {
      requestId,
      runner,
      deployment,
      status: INDEX_STATUS,
      startedAt,
    });
  } catch (err) {
    if (err instanceof SagawayError && err.code === 'RECORD_EXISTS') return;
    log.warn({ err: toErrorInfo(err), requestId: entry.requestId }, 'correlation id not indexed');
  }
}

/** The run id the caller's correlation id `id` points at in `state`, or undefined. */
export async function correlatedRun(state: State, scope: string, id: string): Promise<string | undefined> {
  const index = await state.get(correlationIndexId(scope, id));
  const requestId = index?.data['requestId'];
  return typeof requestId === 'string' ? requestId : undefined;
}
