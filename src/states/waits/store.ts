/**
 * The store of parked runs' waits and of kept signals (issue 21): two tables beside a runner's
 * journal (`<table>_waits`, `<table>_signals`), in the journal's SQLite file or PostgreSQL
 * database, so that every replica of the runner and every gateway that names the journal sees
 * the same waits. The journal record holds the run (payload, progress); a wait row holds what
 * the schedulers and signallers need: when it is due, what resolves it, who holds its lease.
 *
 * A row is `ready` once its `ready_at` has passed: the due time, or the moment a signal,
 * timeout or cancel resolved it. A poller takes ready rows with a lease (one statement:
 * PostgreSQL `FOR UPDATE SKIP LOCKED`, SQLite a single write under its database lock), so two
 * replicas never take the same row while its lease runs.
 */

/** How a wait was resolved before the run resumes (the resumed step's condition value and data). */
export interface StoredResolution {
  value: 'SUCCESS' | 'SIGNAL' | 'TIMEOUT' | 'REJECTED' | 'CANCELLED';
  data?: unknown;
}

/** One parked run's wait. */
export interface WaitRow {
  waitId: string;
  /** the journal record of the run */
  journalId: string;
  runId: string;
  runner: string;
  deployment: string;
  sagaId: string;
  step: string;
  visit: number;
  kind: 'timer' | 'signal';
  signal: string | null;
  key: string | null;
  /** epoch ms: a timer is due, a signal wait times out */
  dueAt: number;
  resolution: StoredResolution | null;
  /** principals (`sub`) that approved so far */
  approvals: string[];
  /** the run's own caller (its caller key, core/caller.ts: `jwt:<sub>`, `key:<name>`), for `selfApproval: false` and cancel; null = anonymous */
  caller: string | null;
  version: number;
  createdAt: number;
  /**
   * The run's journal record (its version and data) as the claim read it, when the store could
   * read it in the same statement (PostgreSQL: claimReady joins the journal table); null: no
   * record; absent: not read (the resume reads it).
   */
  journal?: { version: number; data: Record<string, unknown> } | null;
}

/** A row to park (store.park). */
export type ParkRow = Omit<WaitRow, 'version' | 'resolution' | 'approvals' | 'journal'>;

/** What a park answers: the row as stored (the same wait parked again keeps its id and resolution). */
export interface Parked {
  waitId: string;
  version: number;
  resolution: StoredResolution | null;
}

/** A signal kept because no run waited for it (`POST /api/signals/<name>`), or remembered for its messageId. */
export interface SignalRow {
  messageId: string;
  signal: string;
  key: string;
  data: unknown;
  /** epoch ms until which a wait may still consume it */
  keepUntil: number;
  /** the wait that consumed it; null while kept */
  consumedBy: string | null;
}

/** Counts for /metrics. */
export interface WaitStats {
  parked: number;
  due: number;
  kept: number;
}

/** The store (SQL: sql.ts). Times are the callers' clocks (epoch ms). */
export interface WaitStore {
  /**
   * Store (or replace, for the same journal record) a run's wait, leased by `owner` until
   * `leaseUntil`: the parking process holds it until the journal says WAITING. A store whose
   * claim reads the journal (PostgreSQL: claimReady takes no wait whose run's record is
   * RUNNING) needs no such lease and writes none.
   */
  park(row: ParkRow, owner: string, leaseUntil: number): Promise<Parked>;
  /** drop the lease `owner` holds on a wait (readies it for any poller); nothing where park took none */
  unlease(waitId: string, owner: string): Promise<void>;
  /** take up to `limit` ready waits of a runner deployment, leased to `owner` until `leaseUntil` */
  claimReady(
    runner: string,
    deployment: string,
    now: number,
    owner: string,
    leaseUntil: number,
    limit: number,
  ): Promise<WaitRow[]>;
  /** the earliest ready time after `after` of a runner deployment's waits (the poller sleeps until it) */
  nextReady(runner: string, deployment: string, after: number): Promise<number | undefined>;
  byRun(runId: string): Promise<WaitRow | undefined>;
  byId(waitId: string): Promise<WaitRow | undefined>;
  /**
   * Resolve an unresolved wait whose version is `version`; `approvals` replaces its approvers.
   * `resolution` null: only record the approvers (an approval short of the required count).
   * False when the wait moved on (another resolution or approval came first).
   */
  resolve(
    waitId: string,
    version: number,
    resolution: StoredResolution | null,
    approvals: string[],
    now: number,
  ): Promise<boolean>;
  /** unresolved waits on `signal` with `key`, oldest first */
  waitingFor(signal: string, key: string, limit: number): Promise<WaitRow[]>;
  remove(waitId: string): Promise<void>;
  /**
   * Remember a signal by its messageId (kept for a wait until `keepUntil`, remembered until
   * `expiresAt`); the row already there when the messageId was seen before.
   */
  keepSignal(row: SignalRow, expiresAt: number): Promise<SignalRow | undefined>;
  /** take the oldest kept signal of `signal`/`key` for `waitId` */
  takeSignal(signal: string, key: string, waitId: string, now: number): Promise<SignalRow | undefined>;
  /** take the signal `messageId` for `waitId` (its sender applying it), unless a wait took it */
  claimSignal(messageId: string, waitId: string): Promise<boolean>;
  /** give a taken signal back (its wait had been resolved otherwise) */
  releaseSignal(messageId: string, waitId: string): Promise<void>;
  /** signals kept (not consumed, not past keepUntil) */
  keptCount(now: number): Promise<number>;
  stats(now: number): Promise<WaitStats>;
  /** delete signals past their expiry (bounded) */
  prune(now: number): Promise<void>;
  close(): Promise<void>;
}
