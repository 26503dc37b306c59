import { SagawayError, toErrorInfo } from '../../core/errors.js';
import type { TraceCarrier } from '../../core/otel.js';
import type { Logger } from '../../core/logger.js';
import type { EventStatus, Payload, RequestContext, SagaResult } from '../../core/types.js';
import { groupCommit, GroupCommitState } from '../../states/group-commit.js';
import type { RunProgress, UnwindJournal } from '../../saga/engine.js';
import type { SuspendHook } from '../../saga/suspend.js';
import type { State, StateRecord, WriteOptions } from '../../states/state.js';
import { indexCorrelation } from './correlation-index.js';
import { journalId, type JournalData, type JournalEntry } from './journal-record.js';
import { JournalScans } from './journal-scans.js';

/**
 * The saga journal (`runners.R.journal: <state alias>`): one record per gateway request, keyed
 * by the caller's scope (core/caller.ts) and the run id the gateway made for the request,
 * holding where the run is (the step after the last completed event step, and the payload then)
 * and, at the end, its result. A restarted orchestrator takes over the RUNNING records whose
 * owner process is gone and resumes them from that step; the status endpoint reads the result.
 *
 * Run ids are made by the gateway and never repeat, so no request can land on another's record
 * (issue 9 item 4: a client-chosen id used to replace a running record, and the first run was
 * aborted as "taken over"). The client's own `X-Request-Id` (the correlation id) gets a small
 * index record of its own in the caller's scope, written once: the first run that carried it
 * (correlation-index.ts).
 *
 * This file is the writer: a run's start, progress, unwind and outcome. The record's shape is
 * journal-record.ts, the orphan scan and retention journal-scans.ts, and the gateway's reads
 * (status, the console's list) journal-reader.ts.
 */

/**
 * The journal of one runner. Its writes are group-committed (states/group-commit.ts): the writes
 * of concurrent runs share one transaction per tick, and each resolves only once committed.
 */
export class Journal {
  /** the journal's store, through group commit: every record kind written here is batched */
  private readonly state: State;
  /** runs opened here whose start record is not written yet (open) */
  private readonly unwritten = new WeakMap<
    JournalEntry,
    { data: JournalData; scope: string; correlation: string | undefined }
  >();
  /** runs whose start record failed to be written: kept so that their outcome can carry it (settle) */
  private readonly failedStarts = new WeakMap<
    JournalEntry,
    { data: JournalData; scope: string; correlation: string | undefined }
  >();
  /** outcome writes waiting to be tried again, by record id (settle) */
  private readonly retrying = new Map<string, NodeJS.Timeout>();
  /** the orphan scan and retention (journal-scans.ts) */
  private readonly scans: JournalScans;

  constructor(
    state: State,
    private readonly runner: string,
    private readonly deployment: string,
    readonly instance: string,
    private readonly log: Logger,
  ) {
    this.state = groupCommit(state);
    this.scans = new JournalScans(this.state, runner, deployment, instance);
  }

  /**
   * Record a new run and wait for the record to be committed; throws STATE_UNAVAILABLE when the
   * store is down (the caller gets 503). `scope` is the caller's (core/caller.ts callerKey);
   * `correlation` the client's own id.
   */
  async begin(
    sagaId: string,
    runId: string,
    input: Record<string, unknown>,
    context: RequestContext,
    scope: string,
    correlation?: string,
  ): Promise<JournalEntry> {
    const entry = this.open(sagaId, runId, input, context, scope, correlation);
    await this.writeStart(entry);
    return entry;
  }

  /**
   * A new run, its start record not yet written. It is written by started(), which the engine
   * awaits before the run's first event is dispatched (issue 26: no side effect before a record
   * to resume or undo it), so the start records of concurrent runs share a group commit; a run
   * that ends before any event step (transforms and conditions only) writes it WITH its outcome,
   * as one record in one write (settle).
   */
  open(
    sagaId: string,
    runId: string,
    input: Record<string, unknown>,
    context: RequestContext,
    scope: string,
    correlation?: string,
    trace?: TraceCarrier,
  ): JournalEntry {
    const now = Date.now();
    const entry: JournalEntry = { id: journalId(scope, context.request.id), version: 0 };
    const data: JournalData = {
      requestId: context.request.id,
      ...(correlation !== undefined ? { correlationId: correlation } : {}),
      runner: this.runner,
      deployment: this.deployment,
      sagaId,
      runId,
      owner: this.instance,
      status: 'RUNNING',
      context: { request: context.request, user: context.user },
      input,
      startedAt: now,
      updatedAt: now,
    };
    // tracing: the run's first trace, linked from a resumed run's (run-span.ts)
    if (trace !== undefined) data.trace = trace;
    this.unwritten.set(entry, { data, scope, correlation });
    return entry;
  }

  /**
   * Make sure the run's record exists: write its start record now if it is not written yet, and
   * wait for it (rejects with STATE_UNAVAILABLE when the store is down). The engine calls it
   * before a journaled run's first event (SagaRun.started).
   */
  started(entry: JournalEntry): Promise<void> {
    return this.writeStart(entry);
  }

  /**
   * Write the start record of `entry` now, merged with `fields` (the run's first step record or
   * its outcome); afterwards `entry.ready` settles with it. Without an unwritten start, the
   * write already made (or in flight).
   */
  private writeStart(entry: JournalEntry, fields: Partial<JournalData> = {}): Promise<void> {
    const u = this.unwritten.get(entry);
    if (!u) return entry.ready ?? Promise.resolve();
    this.unwritten.delete(entry);
    // u.data is this run's alone and unused once taken: completed in place (a two-source spread
    // copied the record through V8's generic path, most of this function's cost in the profile).
    const data = Object.assign(u.data, fields);
    data.updatedAt = Date.now();
    const ready = this.record(entry, data, u.scope, u.correlation);
    // awaited by the run's next write; until then a failure must not count as unhandled. The
    // start is kept for the run's outcome, which then writes the whole record (settle).
    ready.catch(() => this.failedStarts.set(entry, { data, scope: u.scope, correlation: u.correlation }));
    entry.ready = ready;
    return ready;
  }

  /** Create a run's record (and its correlation index entry, in the same batch). */
  private async record(
    entry: JournalEntry,
    data: JournalData,
    scope: string,
    correlation: string | undefined,
  ): Promise<void> {
    const id = entry.id;
    const created = this.state.create(id, data);
    const indexed =
      correlation !== undefined
        ? indexCorrelation(this.state, this.log, scope, correlation, {
            requestId: data.requestId,
            runner: this.runner,
            deployment: this.deployment,
            startedAt: data.startedAt,
          })
        : undefined;
    try {
      entry.version = (await created).version;
    } catch (err) {
      await indexed;
      if (!(err instanceof SagawayError && err.code === 'RECORD_EXISTS')) throw err;
      // Only the runs of one stream share a request id (one poll after the other): the next
      // poll replaces a finished record, never one that is still running.
      entry.version = await this.replaceFinished(id, data);
      return;
    }
    await indexed;
  }

  private async replaceFinished(id: string, data: JournalData): Promise<number> {
    const old = await this.state.get(id);
    if (old && old.data['status'] !== 'DONE') {
      throw new SagawayError('RUNNER_UNAVAILABLE', 'a run with this request id is still in progress');
    }
    const rec = old
      ? await this.state.set(id, data, { expectedVersion: old.version })
      : await this.state.upsert(id, data);
    return rec.version;
  }

  /**
   * The journal hook of one run (engine `SagaRun.journal`). Every write names the version it
   * last wrote: when another process has taken the run over (this one was cut off from the others
   * long enough to look dead), the write fails and this copy of the run stops, so one process at a
   * time moves a run forward.
   */
  stepper(
    entry: JournalEntry,
  ): (next: string, payload: Payload, ctx: RequestContext, progress?: RunProgress) => Promise<void> {
    return (next, payload, ctx, progress) =>
      this.write(entry, {
        next,
        payload,
        lastStatus: ctx.status ?? null,
        lastError: ctx.error ?? null,
        // Absent when empty: most sagas have neither compensations nor loops.
        ...(progress && progress.undo.length > 0 ? { undo: progress.undo } : {}),
        ...(progress && Object.keys(progress.visits).length > 0 ? { visits: progress.visits } : {}),
        ...(progress?.resumedWait ? { waitResult: null } : {}), // waits: the run moved past its wait
        updatedAt: Date.now(),
      });
  }

  /**
   * The unwind journal of one run (issue 12): the registrations and the run's result before the
   * first undo, then how each undo ended. A process that takes the run over goes on with the
   * undos that have no status yet (an undo cut off mid-flight runs again, with the same key).
   */
  unwinder(entry: JournalEntry, resumed?: { result: SagaResult; done: (EventStatus | null)[] }): UnwindJournal {
    let result = resumed?.result;
    const done = resumed ? [...resumed.done] : [];
    return {
      begin: async (undo, res) => {
        result = res;
        entry.unwound = true;
        await this.unwindWrite(entry, () => ({ undo: [...undo], unwind: { result, done }, updatedAt: Date.now() }));
      },
      undone: async (index, status) => {
        done[index] = status;
        for (let i = 0; i < done.length; i++) done[i] ??= null;
        await this.unwindWrite(entry, () => ({ unwind: { result, done }, updatedAt: Date.now() }));
      },
    };
  }

  /**
   * A write of the unwind, tried again while the store is down (issue 26: the database stopped
   * while a run failed left its `reserve` with nothing to undo it: the write before the first
   * undo failed, the compensations stopped, and the owner, alive, then wrote the FAIL outcome, so
   * nobody resumed the unwind). Backoff as for outcomes, for at most UNWIND_WRITE_BUDGET_MS; a
   * run taken over by another process is theirs to undo and fails at once, as before.
   */
  private async unwindWrite(entry: JournalEntry, patch: () => Record<string, unknown>): Promise<void> {
    const until = Date.now() + UNWIND_WRITE_BUDGET_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.write(entry, patch());
      } catch (err) {
        const takenOver = err instanceof SagawayError && err.code === 'RUNNER_UNAVAILABLE';
        const wait = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** attempt);
        if (takenOver || Date.now() + wait > until) throw err;
        this.log.warn({ err: toErrorInfo(err), journal: entry.id, attempt }, 'unwind not journaled; retrying');
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  /**
   * runs (issue 22): the suspend hook of one run (engine `SagaRun.suspend`): a run whose retries
   * ran out under `onExhausted: suspend` is parked SUSPENDED at the failed step, with its payload,
   * compensations and visits, until a redrive or an abort (run-admin.ts).
   */
  suspender(entry: JournalEntry): SuspendHook {
    return (step, payload, ctx, progress) =>
      this.write(entry, {
        status: 'SUSPENDED',
        next: step,
        payload,
        lastStatus: ctx.status ?? null,
        lastError: ctx.error ?? null,
        undo: progress.undo.length > 0 ? progress.undo : null,
        visits: Object.keys(progress.visits).length > 0 ? progress.visits : null,
        updatedAt: Date.now(),
      });
  }

  /** waits: one write of a run's record (parking it: runner/waits/park.ts), as the stepper writes. */
  patchRun(entry: JournalEntry, patch: Record<string, unknown>): Promise<void> {
    return this.write(entry, patch);
  }

  /** One progress write, against the version this process last wrote (see stepper). */
  private async write(entry: JournalEntry, patch: Record<string, unknown>): Promise<void> {
    // the first journal write of a run carries its start record (open()); the patch's fields
    // are those of JournalData (stepper, unwinder)
    if (this.unwritten.has(entry)) return this.writeStart(entry, patch as Partial<JournalData>);
    await entry.ready;
    try {
      const rec = await this.patch(entry.id, patch, { expectedVersion: entry.version });
      entry.version = rec.version;
    } catch (err) {
      if (err instanceof SagawayError && err.code === 'STALE_VERSION') {
        throw new SagawayError(
          'RUNNER_UNAVAILABLE',
          'this saga run was taken over by another runner; its outcome will be at /api/status',
        );
      }
      throw err;
    }
  }

  /**
   * The end of a run (runner.ts: started here, or resumed): its outcome, with the start record
   * when that is not written yet (issue 26 item 1: no answer without its record).
   *
   * - `written`: the outcome is in the journal; the caller may have the result.
   * - `taken-over`: another process took the run over (this one was cut off long enough to look
   *   dead); the outcome is the new owner's to write, and the caller must not have this one.
   * - `retrying`: the store refused the write (down, unreachable). The caller must not have the
   *   result (it gets 503 STATE_UNAVAILABLE); the write is tried again in the background, with
   *   backoff, until it lands or the run is taken over, so that a run never stays RUNNING while
   *   its owner lives on. Writes waiting for that are bounded (MAX_RETRYING); past the bound the
   *   outcome is logged and left to the orphan scan once this process is gone.
   */
  async settle(entry: JournalEntry, result: SagaResult): Promise<'written' | 'taken-over' | 'retrying'> {
    const write = this.outcomeWrite(entry, result);
    try {
      await write();
      return 'written';
    } catch (err) {
      if (isStale(err)) {
        this.log.info({ journal: entry.id }, 'saga run taken over by another runner; its outcome is theirs to write');
        return 'taken-over';
      }
      this.log.error({ err: toErrorInfo(err), journal: entry.id }, 'saga outcome not journaled; retrying');
      this.retryOutcome(entry.id, write, 0);
      return 'retrying';
    }
  }

  /** settle() for a run nobody waits for (resumed): the outcome is written, now or by the retries. */
  async finish(entry: JournalEntry, result: SagaResult): Promise<void> {
    await this.settle(entry, result);
  }

  /**
   * One attempt to write the outcome of `entry`, repeatable: the run's whole record (start and
   * outcome) when the start record was never written (not yet, or its write failed), else a
   * patch of the outcome against the version this process last wrote.
   */
  private outcomeWrite(entry: JournalEntry, result: SagaResult): () => Promise<void> {
    // A failed run keeps where it was (next step, payload, visits: run-admin.ts redrives it from
    // there), unless its compensations ran; any other end drops the payload.
    const failed = result.outcome === 'FAIL' || result.outcome === 'TIMEOUT';
    const done = failed
      ? { status: 'DONE' as const, result, ...(entry.unwound ? { compensated: true, payload: null } : {}) }
      : { status: 'DONE' as const, result, payload: null };
    if (this.unwritten.has(entry)) {
      const u = this.unwritten.get(entry)!;
      let first = true;
      return () => {
        if (first) {
          first = false;
          return this.writeStart(entry, done);
        }
        return this.record(entry, Object.assign(u.data, done, { updatedAt: Date.now() }), u.scope, u.correlation);
      };
    }
    return async () => {
      try {
        await entry.ready;
      } catch (err) {
        // the start record never landed: write the whole record now, with the outcome
        const u = this.failedStarts.get(entry);
        if (u === undefined) throw err;
        await this.record(entry, Object.assign(u.data, done, { updatedAt: Date.now() }), u.scope, u.correlation);
        entry.ready = Promise.resolve();
        this.failedStarts.delete(entry);
        return;
      }
      const rec = await this.patch(
        entry.id,
        { ...done, ...(failed ? {} : { undo: null, visits: null }), unwind: null, updatedAt: Date.now() },
        { expectedVersion: entry.version },
      );
      entry.version = rec.version;
    };
  }

  /** Try `write` again after a backoff, until it lands or the run is taken over. */
  private retryOutcome(id: string, write: () => Promise<void>, attempt: number): void {
    if (!this.retrying.has(id) && this.retrying.size >= MAX_RETRYING) {
      this.log.error(
        { journal: id },
        'saga outcome not journaled: too many outcome writes waiting; left to the orphan scan',
      );
      return;
    }
    const timer = setTimeout(
      () => {
        write().then(
          () => {
            this.retrying.delete(id);
            this.log.info({ journal: id, attempts: attempt + 2 }, 'saga outcome journaled after a retry');
          },
          (err: unknown) => {
            if (isStale(err)) {
              this.retrying.delete(id);
              return;
            }
            this.retryOutcome(id, write, attempt + 1);
          },
        );
      },
      Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** attempt),
    );
    // a stopping process does not wait for these: its RUNNING records go to the orphan scan
    timer.unref();
    this.retrying.set(id, timer);
  }

  /** Outcome writes waiting to be tried again (tests, diagnostics). */
  get outcomesRetrying(): number {
    return this.retrying.size;
  }

  /** Retention (`runners.R.journalRetention`): delete finished runs past `retentionMs` (journal-scans.ts). */
  prune(retentionMs: number, now = Date.now()): Promise<number> {
    return this.scans.prune(retentionMs, now);
  }

  /** An update whose merged data is not needed back (only its version). */
  private patch(id: string, patch: Record<string, unknown>, options: WriteOptions): Promise<StateRecord> {
    const s = this.state;
    return s instanceof GroupCommitState ? s.patch(id, patch, options) : s.update(id, patch, options);
  }

  /** Claim for this process the RUNNING runs whose owner is gone (journal-scans.ts). */
  claimOrphans(isLive: (instance: string) => boolean, limit = 100): Promise<StateRecord[]> {
    return this.scans.claimOrphans(isLive, limit);
  }
}

/** Outcome writes that wait to be tried again, at most (settle). */
export const MAX_RETRYING = 10_000;
/** First and longest pause between two tries of an outcome write. */
const RETRY_FIRST_MS = 200;
/** How long an unwind's journal write is tried again while the store is down (unwinder). */
export const UNWIND_WRITE_BUDGET_MS = 30_000;
const RETRY_MAX_MS = 5000;

/** Whether a write failed because another process took the run over (its version moved on). */
function isStale(err: unknown): boolean {
  return err instanceof SagawayError && err.code === 'STALE_VERSION';
}
