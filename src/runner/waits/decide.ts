import type { ValidateFunction } from 'ajv';
import { callerKey } from '../../core/caller.js';
import { SagawayError } from '../../core/errors.js';
import type { Principal } from '../../core/types.js';
import type { WaitStep } from '../../saga/graph.js';
import { signalSchemas } from '../../saga/wait-plan.js';
import type { StoredResolution, WaitRow, WaitStore } from '../../states/waits/store.js';

/**
 * Applying one decision to one wait (issue 21): a signal's body, an approval, a rejection or a
 * cancel. Every path to a wait (by run, by correlation key, by callback token) ends here, so the
 * rules are the same whatever the door: a wait already resolved takes nothing (409), a body
 * must satisfy the wait's `signal.schema`, an approval needs distinct principals and, with
 * `selfApproval: false`, not the run's own caller. The store's compare-and-set on the wait's
 * version makes concurrent decisions settle on one.
 */

/** What was decided. */
export type Decision = 'signal' | 'approve' | 'reject' | 'cancel';

/** The answer to a decision that was taken. */
import type { Decided } from '../../core/waits.js';
export type { Decided };

/** Largest signal body (JSON text) a wait takes. */
export const MAX_SIGNAL_BYTES = 64 * 1024;

const validators = new WeakMap<object, ValidateFunction>();

/** 400 SIGNAL_INVALID unless `data` satisfies the wait's schema (its first error's pointer named). */
export function checkSignalBody(step: WaitStep, data: unknown): void {
  if (JSON.stringify(data ?? null).length > MAX_SIGNAL_BYTES) {
    throw new SagawayError('PAYLOAD_TOO_LARGE', `a signal body is at most ${MAX_SIGNAL_BYTES} bytes`);
  }
  const schema = step.wait.signal?.schema;
  if (schema === undefined) return;
  let validate = validators.get(schema);
  if (validate === undefined) validators.set(schema, (validate = signalSchemas.compile(schema)));
  if (!validate(data)) {
    const first = validate.errors?.[0];
    throw new SagawayError(
      'SIGNAL_INVALID',
      `the signal does not match the wait's schema at "${first?.instancePath ?? ''}": ${first?.message ?? 'invalid'}`,
    );
  }
}

/** Who decides, as an approver: the principal's subject; an anonymous token holder is `callback`. */
function approverOf(principal: Principal | null): string {
  return principal && !principal.anonymous ? principal.sub : 'callback';
}

/**
 * Apply `decision` to the wait `row` (of step `step`); `expired` says how a wait past its due
 * time is refused (410 for a callback token, 409 otherwise). Retries the compare-and-set while
 * other approvals race it.
 */
export async function decide(
  store: WaitStore,
  row: WaitRow,
  step: WaitStep,
  decision: Decision,
  data: unknown,
  principal: Principal | null,
  now: number,
  expired: 'CALLBACK_EXPIRED' | 'WAIT_RESOLVED' = 'WAIT_RESOLVED',
): Promise<Decided> {
  for (let attempt = 0; attempt < 5; attempt++) {
    if (row.resolution !== null) throw new SagawayError('WAIT_RESOLVED', 'the wait has already ended');
    // a cancel too: a poller may have taken the due wait already (SUCCESS, TIMEOUT) and resumed
    // its run, and the cancel written now would be answered 202 CANCELLED for a run that goes on
    if (row.dueAt <= now) throw new SagawayError(expired, 'the wait timed out');
    const { resolution, approvals } = outcomeOf(row, step, decision, data, principal);
    if (await store.resolve(row.waitId, row.version, resolution, approvals, now)) {
      const required = step.wait.approvals?.required;
      return {
        runId: row.runId,
        status: resolution?.value ?? 'APPROVING',
        ...(required !== undefined ? { approvals: approvals.length, required } : {}),
      };
    }
    const again = await store.byId(row.waitId);
    if (again === undefined) throw new SagawayError('WAIT_RESOLVED', 'the wait has already ended');
    row = again;
  }
  throw new SagawayError('WAIT_RESOLVED', 'the wait is being decided by others; try again');
}

function outcomeOf(
  row: WaitRow,
  step: WaitStep,
  decision: Decision,
  data: unknown,
  principal: Principal | null,
): { resolution: StoredResolution | null; approvals: string[] } {
  if (decision === 'cancel') return { resolution: { value: 'CANCELLED' }, approvals: row.approvals };
  const rules = step.wait.approvals;
  const by = approverOf(principal);
  // A wait parked by an earlier version holds its caller's bare subject: matching it as well only ever
  // refuses an approval, never lets one through.
  const self =
    principal !== null &&
    !principal.anonymous &&
    (callerKey(principal, '') === row.caller || principal.sub === row.caller);
  if (rules !== undefined && !rules.selfApproval && row.caller !== null && self) {
    throw new SagawayError('SELF_APPROVAL', "the run's own caller cannot decide on its approval");
  }
  if (decision === 'reject') {
    return {
      resolution: { value: 'REJECTED', data: { decision: 'reject', by, ...bodyOf(data) } },
      approvals: row.approvals,
    };
  }
  if (rules === undefined) return { resolution: { value: 'SIGNAL', data }, approvals: row.approvals };
  if (row.approvals.includes(by)) throw new SagawayError('ALREADY_APPROVED', 'this principal has already approved');
  const approvals = [...row.approvals, by];
  if (approvals.length < rules.required) return { resolution: null, approvals };
  return {
    resolution: { value: 'SIGNAL', data: { decision: 'approve', approvers: approvals, ...bodyOf(data) } },
    approvals,
  };
}

/** A decision's own body, kept next to who decided (`comment` and the like). */
function bodyOf(data: unknown): { data?: unknown } {
  return data === undefined || data === null || (typeof data === 'object' && Object.keys(data).length === 0)
    ? {}
    : { data };
}
