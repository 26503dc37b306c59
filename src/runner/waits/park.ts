import { randomUUID } from 'node:crypto';
import { Cancel } from '../../core/cancel.js';
import { callerKey } from '../../core/caller.js';
import { toErrorInfo } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { EventMessage, EventReply } from '../../core/messages.js';
import type { Payload, RequestContext } from '../../core/types.js';
import type { CompiledSaga } from '../../saga/graph.js';
import type { ParkHook, ParkRequest, WaitingOn } from '../../saga/wait-step.js';
import type { WaitStore } from '../../states/waits/store.js';
import type { Journal } from '../orchestrator/journal.js';
import type { JournalEntry } from '../orchestrator/journal-record.js';
import type { CallbackTokens } from './tokens.js';

/**
 * Parking a run (issue 21). The order of the writes is what makes a crash at any moment lose
 * nothing:
 *
 *   1. the wait row, leased to this process (PARK_LEASE_MS): no poller takes it yet (on
 *      PostgreSQL without a lease: its claim takes no wait whose run's record is RUNNING);
 *   2. a correlation signal kept before the wait existed is taken for it (the signal sender does
 *      the mirror image: keep, then look for waits; one of the two always sees the other);
 *   3. the `notify` event, when the wait has one and is not decided yet, after the run's start
 *      record is written: a process killed before it was sent leaves the journal RUNNING, and
 *      the orphan scan runs the run to this wait again and sends it again, with the same
 *      idempotency key (at least once, like an event step); the journal records its reply;
 *   4. the journal record: WAITING at the wait step, with the payload and the progress;
 *   5. the lease is dropped (SQLite): from now on any replica's poller may resume the run.
 *
 * A crash after 1 leaves the journal RUNNING with a dead owner: the orphan scan resumes the run
 * from its last journaled step, it reaches the wait again and parks it again over the same row
 * (same step and visit: a resolution already there is kept). A crash after 4 leaves a lease that
 * runs out. A poller that takes a row whose journal is not WAITING at that step leaves it alone
 * (journal RUNNING: its owner or the orphan scan is on it) or removes it (the run ended).
 */

/** How long a parking process holds its new wait before the journal says WAITING. */
export const PARK_LEASE_MS = 30_000;

/** What the park hook of one run needs. */
export interface ParkContext {
  store: WaitStore;
  journal: Journal;
  entry: JournalEntry;
  saga: CompiledSaga;
  runId: string;
  runner: string;
  deployment: string;
  instance: string;
  now: () => number;
  tokens: CallbackTokens;
  log: Logger;
  /** sends the notify event (the runner's dispatch) */
  dispatch(event: EventMessage, cancel: Cancel): Promise<EventReply>;
}

/** The park hook (engine SagaRun.park) of one journaled run. */
export function parkHook(p: ParkContext): ParkHook {
  return async (request, payload, context, progress) => {
    const now = p.now();
    const dueAt = request.dueAt ?? now + (request.dueIn ?? 0);
    const fresh = randomUUID();
    // the same wait parked again after a crash keeps its first id (and its resolution)
    const row = await p.store.park(
      {
        waitId: fresh,
        journalId: p.entry.id,
        runId: p.runId,
        runner: p.runner,
        deployment: p.deployment,
        sagaId: p.saga.id,
        step: request.step,
        visit: request.visit,
        kind: request.kind,
        signal: request.signal ?? null,
        key: request.key ?? null,
        dueAt,
        // its caller key (core/caller.ts), not the bare sub: a token's subject may spell `apikey:alice`
        caller: context.user && !context.user.anonymous ? callerKey(context.user, '') : null,
        createdAt: now,
      },
      p.instance,
      now + PARK_LEASE_MS,
    );
    const waitId = row.waitId;
    let decided = row.resolution !== null;
    if (!decided && request.signal !== undefined && request.key !== undefined) {
      decided = await takeKeptSignal(p, row.waitId, row.version, request.signal, request.key, now);
    }
    // before the journal says WAITING: at least once (see 3. above); a decided wait needs no links
    const notified = decided ? undefined : await notify(p, request, payload, context, waitId, dueAt);
    const waitingOn: WaitingOn = {
      step: request.step,
      kind: request.kind,
      until: new Date(dueAt).toISOString(),
      ...(request.signal !== undefined ? { signal: request.signal } : {}),
      ...(request.key !== undefined ? { key: request.key } : {}),
    };
    await p.journal.patchRun(p.entry, {
      status: 'WAITING',
      next: request.step,
      payload,
      lastStatus: context.status ?? null,
      lastError: context.error ?? null,
      undo: progress.undo.length > 0 ? progress.undo : null,
      visits: progress.visits,
      waitingOn,
      wait: { waitId, step: request.step, visit: request.visit },
      waitResult: null,
      ...(notified !== undefined ? { notified } : {}),
      updatedAt: Date.now(),
    });
    await p.store.unlease(waitId, p.instance).catch((err: unknown) => {
      // the lease runs out on its own: the run is resumed PARK_LEASE_MS late at worst
      p.log.warn({ err: toErrorInfo(err), runId: p.runId }, 'wait lease not dropped');
    });
    return waitingOn;
  };
}

/** Consume a signal kept for this wait's name and key, if one waits (see the order above). */
async function takeKeptSignal(
  p: ParkContext,
  waitId: string,
  version: number,
  signal: string,
  key: string,
  now: number,
): Promise<boolean> {
  const kept = await p.store.takeSignal(signal, key, waitId, now);
  if (kept === undefined) return false;
  const applied = await p.store.resolve(waitId, version, { value: 'SIGNAL', data: kept.data }, [], now);
  // resolved otherwise in between (a cancel): the signal goes back for the next wait
  if (!applied) await p.store.releaseSignal(kept.messageId, waitId);
  return true;
}

/**
 * The wait's `notify` event, once the wait is stored: its payload is the run's, with `wait`
 * (run id, step, due time, and the callback URLs of a signal wait). At least once (parkHook, 3.):
 * the run's start record is written first, so that a process killed while it is sent leaves a
 * record for the orphan scan. Resolves with the reply's status (undefined: no notify).
 */
async function notify(
  p: ParkContext,
  request: ParkRequest,
  payload: Payload,
  context: RequestContext,
  waitId: string,
  dueAt: number,
): Promise<string | undefined> {
  const step = p.saga.steps.get(request.step);
  const meta = step?.type === 'wait' ? step.wait.notify : undefined;
  if (meta === undefined) return undefined;
  // a run whose start record is not written yet (no event step before the wait) would leave
  // nothing to resume from if this process died while the notify is out
  await p.journal.started(p.entry);
  const wait: Record<string, unknown> = { runId: p.runId, step: request.step, until: new Date(dueAt).toISOString() };
  if (request.kind === 'signal') {
    const token = p.tokens.sign({ waitId, runId: p.runId, step: request.step, visit: request.visit, expiresAt: dueAt });
    wait['callbacks'] = {
      approve: `/api/callbacks/${token}`,
      reject: `/api/callbacks/${token}?decision=reject`,
      signal: `/api/runs/${encodeURIComponent(p.runId)}/signals/${request.signal ?? ''}`,
    };
  }
  const key = `${p.runId}:${request.step}:notify${request.visit > 1 ? `#${request.visit}` : ''}`;
  const cancel = new Cancel();
  const timer = setTimeout(() => cancel.abort(), meta.timeoutMs ?? 30_000);
  try {
    const reply = await p.dispatch(
      {
        id: randomUUID(),
        runId: p.runId,
        stepId: `${request.step}:notify`,
        idempotencyKey: key,
        stream: meta.stream,
        meta: meta.raw,
        payload: { ...payload, wait },
        context,
        deadline: Date.now() + (meta.timeoutMs ?? 30_000),
      },
      cancel,
    );
    if (reply.status !== 'SUCCESS' && reply.status !== 'ACK') {
      p.log.warn({ runId: p.runId, step: request.step, code: reply.error?.code }, 'wait notify event failed');
    }
    return reply.status;
  } catch (err) {
    // as a failed reply: the wait stands, the links can be sent by other means (the console)
    p.log.warn({ err: toErrorInfo(err), runId: p.runId, step: request.step }, 'wait notify event failed');
    return 'FAIL';
  } finally {
    clearTimeout(timer);
  }
}
