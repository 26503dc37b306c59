// crypto.hash (Node >= 20.12; engines ask >= 20.18.1) makes no Hash object per key: half its cost.
import { hash as digest } from 'node:crypto';
import type { ErrorInfo } from '../../core/errors.js';
import type { TraceCarrier } from '../../core/otel.js';
import type { EventStatus, Payload, RequestContext, SagaResult } from '../../core/types.js';
import type { Registration } from '../../saga/engine.js';

/**
 * A saga journal record (journal.ts writes it, journal-reader.ts reads it): its shape and its
 * key. One file for both sides, so that the writer and the status endpoint cannot drift apart.
 */

/** What a journal record holds. */
export interface JournalData {
  /** the run id (made by the gateway) */
  requestId: string;
  /** the client's own X-Request-Id, when it sent one */
  correlationId?: string;
  runner: string;
  deployment: string;
  sagaId: string;
  runId: string;
  /** process instance running it */
  owner: string;
  status: 'RUNNING' | 'DONE' | 'WAITING' | 'SUSPENDED'; // waits: WAITING = parked (runner/waits/); SUSPENDED: run-admin.ts
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
  /** compensations registered so far (issue 12), oldest first */
  undo?: Registration[] | null;
  /** visits of event steps so far (loops) */
  visits?: Record<string, number> | null;
  /** set when the run failed and is undoing its steps: its result, and how each undo ended (by index) */
  unwind?: { result: SagaResult; done: (EventStatus | null)[] } | null;
  /** tracing: the W3C context of the run's first trace (a resumed run's trace links to it) */
  trace?: TraceCarrier | null;
  /** runs (issue 22, run-admin.ts): a failed run whose compensations ran (it cannot be redriven) */
  compensated?: boolean;
  /** runs: redrives so far, the attempts before this one, and the last redrive's who and why */
  redriveCount?: number;
  [key: string]: unknown;
}

/** A run's record and the version this process last wrote. */
export interface JournalEntry {
  readonly id: string;
  version: number;
  /**
   * Set once the start record is being written: settles when it is committed (rejects with why
   * it could not be). Every later write of the run waits for it.
   */
  ready?: Promise<void>;
  /** runs: its unwind began (its compensations ran, or run): a failed run so is not redrivable */
  unwound?: boolean;
}

/** Record id of a run: bound to the caller's scope, so that nobody else can read or overwrite it. */
export function journalId(scope: string, requestId: string): string {
  return `run-${digest('sha256', `${scope}\n${requestId}`, 'hex').slice(0, 40)}`;
}
