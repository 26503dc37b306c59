import { sagaSchemas } from './io-schemas.js';
import type { RunnerSettings } from './settings.js';
import { failuresOf, type SchemaFailure } from '../core/json-schema.js';
import type { SagaResult } from '../core/types.js';
import type { RawSaga } from '../saga/schema.js';
import { RouteTable } from '../saga/routes.js';

/**
 * A saga's `outputSchema` checked against what it answered (docs/sagas.md#input-and-output-schemas):
 * by `sagaway run`, the test kit, and the gateway with `gateway.validateResponses: true`. Only a
 * SUCCESS has a response to check. A mismatch becomes `500 INVALID_OUTPUT`, whose message names
 * the saga and never the data; the failures (JSON pointers and messages) go to the caller's log.
 */

/** A result checked against its saga's output schema. */
export interface CheckedOutput {
  result: SagaResult;
  /** the failures when the response did not match (then `result` is INVALID_OUTPUT) */
  failures?: SchemaFailure[];
}

/** The sagas with an output schema, by runner, to find the one that produced a result. */
export class OutputChecks {
  private readonly byRunner = new Map<string, { ids: Map<string, RawSaga>; routes: RouteTable }>();

  constructor(runners: Readonly<Record<string, RunnerSettings>>) {
    for (const [name, runner] of Object.entries(runners)) {
      const ids = new Map<string, RawSaga>();
      for (const plan of runner.plans) {
        if (plan.raw.outputSchema === undefined) continue;
        sagaSchemas(plan.raw); // compiled now, not on the first answer
        ids.set(plan.id, plan.raw);
      }
      if (ids.size > 0) this.byRunner.set(name, { ids, routes: new RouteTable(runner.plans) });
    }
  }

  /** Whether any saga declares an output schema. */
  get active(): boolean {
    return this.byRunner.size > 0;
  }

  /** Check `result` of a run of `runner` for `method path` (its `sagaId` names the saga, else the route). */
  check(runner: string, method: string, path: string, result: SagaResult): CheckedOutput {
    if (result.outcome !== 'SUCCESS') return { result };
    const sagas = this.byRunner.get(runner);
    if (sagas === undefined) return { result };
    let saga = result.sagaId === undefined ? undefined : sagas.ids.get(result.sagaId);
    if (saga === undefined && result.sagaId === undefined) {
      const match = sagas.routes.match(method, path);
      if (match.kind === 'found') saga = sagas.ids.get(match.saga.id);
    }
    return saga === undefined ? { result } : checkOutput(saga, result);
  }
}

/** Check a SUCCESS result against `saga`'s output schema (none: nothing to check). */
export function checkOutput(saga: RawSaga, result: SagaResult): CheckedOutput {
  const validate = sagaSchemas(saga).output;
  if (result.outcome !== 'SUCCESS' || validate === undefined || validate(result.response ?? null)) return { result };
  const failures = failuresOf(validate.errors ?? []);
  return {
    failures,
    result: {
      outcome: 'FAIL',
      http: 500,
      error: {
        code: 'INVALID_OUTPUT',
        message: `the response of saga "${saga.id}" does not match its outputSchema`,
        http: 500,
      },
      sagaId: saga.id,
      ...(result.runId !== undefined ? { runId: result.runId } : {}),
    },
  };
}
