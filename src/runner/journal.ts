import { createHash } from 'node:crypto';
import { SagawayError, toErrorInfo, type ErrorInfo } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { isObject } from '../core/path.js';
import type { EventStatus, Payload, RequestContext, SagaResult } from '../core/types.js';
import type { State, StateRecord } from '../states/state.js';

/**
 * The saga journal (`runners.R.journal: <state alias>`): one record per gateway request, keyed
 * by the caller and the request id, holding where the run is (the step after the last completed
 * event step, and the payload then) and, at the end, its result. A restarted orchestrator takes
 * over the RUNNING records whose owner process is gone and resumes them from that step; the
 * status endpoint reads the result.
 */

/** What a journal record holds. */
export interface JournalData {
  requestId: string;
  runner: string;
  deployment: string;
  sagaId: string;
  runId: string;
  /** process instance running it */
  owner: string;
  status: 'RUNNING' | 'DONE';
  context: { request: RequestContext['request']; user: RequestContext['user'] };
  input: Record<string, unknown>;
  /** step to run next (absent: the start step) */
  next?: string | null;
  payload?: Payload | null;
  lastStatus?: EventStatus | null;
  lastError?: ErrorInfo | null;
  startedAt: number;
  updatedAt: number;
  result?: SagaResult | null;
  [key: string]: unknown;
}

/** A run's record and the version this process last wrote. */
export interface JournalEntry {
  readonly id: string;
  version: number;
}

/** What `GET /api/status/<requestId>` shows. */
export interface RunStatus {
  requestId: string;
  status: 'RUNNING' | 'DONE';
  outcome?: SagaResult['outcome'];
  http?: number;
  response?: unknown;
  error?: ErrorInfo;
  startedAt: string;
  updatedAt: string;
}

/** Record id of a request: bound to the caller, so that nobody else can read or overwrite it. */
export function journalId(sub: string, requestId: string): string {
  return `run-${createHash('sha256').update(`${sub}\n${requestId}`).digest('hex').slice(0, 40)}`;
}

/** The journal of one runner. */
export class Journal {
  constructor(
    private readonly state: State,
    private readonly runner: string,
    private readonly deployment: string,
    readonly instance: string,
    private readonly log: Logger,
  ) {}

  /** Record a new run; throws STATE_UNAVAILABLE when the store is down (the caller gets 503). */
  async begin(
    sagaId: string,
    runId: string,
    input: Record<string, unknown>,
    context: RequestContext,
  ): Promise<JournalEntry> {
    const sub = context.user?.sub ?? 'anonymous';
    const id = journalId(sub, context.request.id);
    const now = Date.now();
    const data: JournalData = {
      requestId: context.request.id,
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
    try {
      // One round trip on SQL states; the same caller reusing a request id replaces its record.
      return { id, version: (await this.state.create(id, data)).version };
    } catch (err) {
      if (!(err instanceof SagawayError && err.code === 'RECORD_EXISTS')) throw err;
      return { id, version: (await this.state.upsert(id, data)).version };
    }
  }

  /**
   * The journal hook of one run (engine `SagaRun.journal`). Every write names the version it
   * last wrote: when another process has taken the run over (this one was cut off from the others
   * long enough to look dead), the write fails and this copy of the run stops, so one process at a
   * time moves a run forward.
   */
  stepper(entry: JournalEntry): (next: string, payload: Payload, ctx: RequestContext) => Promise<void> {
    return async (next, payload, ctx) => {
      try {
        const rec = await this.state.update(
          entry.id,
          { next, payload, lastStatus: ctx.status ?? null, lastError: ctx.error ?? null, updatedAt: Date.now() },
          { expectedVersion: entry.version },
        );
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
    };
  }

  /** Write the outcome, unless another process took the run over; a failure is logged (the caller still gets the result). */
  async finish(entry: JournalEntry, result: SagaResult): Promise<void> {
    try {
      const rec = await this.state.update(
        entry.id,
        { status: 'DONE', result, payload: null, updatedAt: Date.now() },
        { expectedVersion: entry.version },
      );
      entry.version = rec.version;
    } catch (err) {
      if (err instanceof SagawayError && err.code === 'STALE_VERSION') {
        this.log.info({ journal: entry.id }, 'saga run taken over by another runner; its outcome is theirs to write');
        return;
      }
      this.log.error({ err: toErrorInfo(err), journal: entry.id }, 'saga outcome not journaled');
    }
  }

  /**
   * Runs of this runner and deployment that are RUNNING while their owner is gone, claimed for
   * this process (compare-and-set on the record version, so two survivors never both take one).
   */
  async claimOrphans(isLive: (instance: string) => boolean, limit = 100): Promise<StateRecord[]> {
    const claimed: StateRecord[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await this.state.list({
        filter: { runner: this.runner, deployment: this.deployment, status: 'RUNNING' },
        limit: 100,
        ...(after ? { after } : {}),
      });
      for (const rec of page.list) {
        const owner = rec.data['owner'];
        if (typeof owner !== 'string' || isLive(owner)) continue;
        try {
          claimed.push(
            await this.state.update(
              rec.id,
              { owner: this.instance, updatedAt: Date.now() },
              { expectedVersion: rec.version },
            ),
          );
        } catch (err) {
          if (!(err instanceof SagawayError && (err.code === 'STALE_VERSION' || err.code === 'RECORD_NOT_FOUND')))
            throw err;
        }
        if (claimed.length >= limit) return claimed;
      }
      if (!page.next) return claimed;
      after = page.next;
    }
  }
}

/** Reads run statuses from the journals of a configuration (gateway side). */
export class JournalReader {
  constructor(private readonly states: readonly State[]) {}

  /** The status of `requestId` as run for `sub`, or undefined when there is none. */
  async lookup(sub: string, requestId: string): Promise<RunStatus | undefined> {
    const id = journalId(sub, requestId);
    for (const state of this.states) {
      const rec = await state.get(id);
      if (rec) return statusOf(rec.data);
    }
    return undefined;
  }
}

function statusOf(data: Record<string, unknown>): RunStatus {
  const result = isObject(data['result']) ? (data['result'] as unknown as SagaResult) : undefined;
  const status = data['status'] === 'DONE' ? 'DONE' : 'RUNNING';
  const iso = (v: unknown) => new Date(typeof v === 'number' ? v : 0).toISOString();
  return {
    requestId: String(data['requestId']),
    status,
    ...(result
      ? {
          outcome: result.outcome,
          http: result.http,
          ...(result.response !== undefined ? { response: result.response } : {}),
          ...(result.error ? { error: result.error } : {}),
        }
      : {}),
    startedAt: iso(data['startedAt']),
    updatedAt: iso(data['updatedAt']),
  };
}
