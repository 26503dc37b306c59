import type { ApiSettings, Settings } from '../../config/settings.js';
import { callerKey } from '../../core/caller.js';
import { SagawayError } from '../../core/errors.js';
import { roleRefusal } from '../../core/roles.js';
import type { Principal } from '../../core/types.js';
import { type KeyedOutcome, type KeyedSignal, type WaitService } from '../../core/waits.js';
import type { WaitStep } from '../../saga/graph.js';
import type { WaitRow, WaitStore } from '../../states/waits/store.js';
import { checkSignalBody, decide, type Decided, type Decision } from './decide.js';
import type { CallbackTokens } from './tokens.js';

/**
 * The three doors to a parked run (issue 21), behind the gateway's routes
 * (gateway/waits/routes.ts): by run (`/api/runs/<runId>/signals/<name>`, `/cancel`), by
 * correlation key (`/api/signals/<name>`) and by callback token (`/api/callbacks/<token>`).
 * Deciding only writes the wait's resolution; the run resumes on a poller of its runner (at
 * once when that runner is in this process: `nudge`).
 */

/** How long a messageId is remembered (a redelivered webhook is applied once), at least. */
export const DEDUPE_MS = 24 * 3600_000;
/** Signals one store keeps at most (unconsumed, within their ttl). */
export const MAX_KEPT_SIGNALS = 10_000;

export class WaitSignals implements WaitService {
  constructor(
    private readonly settings: Settings,
    private readonly stores: ReadonlyMap<string, WaitStore>,
    private readonly tokens: CallbackTokens,
    private readonly now: () => number,
    private readonly nudge: () => void = () => undefined,
    /** subscribe to the end of runs resumed in this process (Prefer: wait); absent elsewhere */
    readonly onEnded?: (listener: (runId: string) => void) => () => void,
  ) {}

  /** Whether any runner of the file parks runs (else the routes answer 404 to everything). */
  get active(): boolean {
    return this.stores.size > 0;
  }

  /** `POST /api/runs/<runId>/signals/<name>`: the body resumes that run's wait on `name`. */
  async signalRun(runId: string, name: string, data: unknown, principal: Principal | null): Promise<Decided> {
    const { store, row, step } = await this.waitOf(runId);
    if (row.signal !== name) throw notFound();
    this.admit(row, step, principal);
    const decision: Decision = step.wait.approvals !== undefined && isReject(data) ? 'reject' : 'approve';
    checkSignalBody(step, data);
    return this.applied(
      await decide(store, row, step, step.wait.approvals ? decision : 'signal', data, principal, this.now()),
    );
  }

  /** `POST /api/runs/<runId>/cancel`: the run's own caller, or one of the wait's roles. */
  async cancel(runId: string, principal: Principal | null): Promise<Decided> {
    const { store, row, step } = await this.waitOf(runId);
    const own = principal && !principal.anonymous && row.caller !== null && callerKey(principal, '') === row.caller;
    const roles = step.wait.signal?.roles ?? [];
    if (!own && (roles.length === 0 || roleRefusal(roles, principal) !== undefined)) {
      throw new SagawayError(
        principal && !principal.anonymous ? 'FORBIDDEN' : 'UNAUTHORIZED',
        "only the run's own caller (or a role of its wait) may cancel it",
      );
    }
    return this.applied(await decide(store, row, step, 'cancel', undefined, principal, this.now()));
  }

  /**
   * runs (issue 22): a waiting run cancelled by an operator (`POST /api/runs/<runId>/abort`, whom
   * the gateway admitted by `gateway.admin`): as a cancel, without the caller and role checks.
   */
  async cancelByOperator(runId: string): Promise<Decided> {
    const { store, row, step } = await this.waitOf(runId);
    return this.applied(await decide(store, row, step, 'cancel', undefined, null, this.now()));
  }

  /** `POST /api/callbacks/<token>`: the token is the permission. */
  async callback(token: string, reject: boolean, data: unknown, principal: Principal | null): Promise<Decided> {
    const { store, row, step } = await this.waitOfToken(token);
    if (!reject) checkSignalBody(step, data);
    const decision: Decision = reject ? 'reject' : step.wait.approvals ? 'approve' : 'signal';
    return this.applied(await decide(store, row, step, decision, data, principal, this.now(), 'CALLBACK_EXPIRED'));
  }

  /** What a callback token decides on (the confirmation page), or its refusal. */
  async callbackInfo(token: string): Promise<{ runId: string; step: string; until: string; approval: boolean }> {
    const { row, step } = await this.waitOfToken(token);
    if (row.resolution !== null) throw new SagawayError('WAIT_RESOLVED', 'the wait has already ended');
    return {
      runId: row.runId,
      step: row.step,
      until: new Date(row.dueAt).toISOString(),
      approval: step.wait.approvals !== undefined,
    };
  }

  /**
   * `POST /api/signals/<name>`: resume the oldest wait on `name` with the signal's key, else keep
   * the signal for `ttl`. The signal is kept first and the waits looked for next (park.ts does
   * the mirror image), so a wait that parks meanwhile is never missed; taking a kept signal and
   * resolving a wait are each one guarded write, so a signal resumes one wait at most, and its
   * messageId is applied once.
   */
  async signalByKey(name: string, signal: KeyedSignal, principal: Principal | null): Promise<KeyedOutcome> {
    if (!principal || principal.anonymous)
      throw new SagawayError('UNAUTHORIZED', 'a correlation signal needs a credential');
    // checked before it is kept: a kept signal is consumed later without its sender
    this.admitKeyed(name, signal.data, principal);
    const now = this.now();
    // the store of the journal whose runners wait on `name` by key (one: checkSignalHomes)
    const home = this.stores.get(signalHome(this.settings, name) ?? '');
    if (home === undefined) throw notFound();
    if (signal.ttlMs > 0 && (await home.keptCount(now)) >= MAX_KEPT_SIGNALS) {
      throw new SagawayError('SIGNALS_EXHAUSTED', 'too many signals are kept; try again later');
    }
    const keepUntil = now + signal.ttlMs;
    // the stored id is the signal's name and its messageId (a name has no ':'): the id a sender of
    // one signal takes must not make another signal's same id a duplicate that never applies
    const id = `${name}:${signal.messageId}`;
    const seen = await home.keepSignal(
      { messageId: id, signal: name, key: signal.key, data: signal.data, keepUntil, consumedBy: null },
      now + Math.max(signal.ttlMs, DEDUPE_MS),
    );
    // remembered but never applied and no longer kept (a ttl-0 signal answered 404, a kept one
    // that ran out): nothing took it, so its sender's retry looks for a wait again rather than
    // being answered as a duplicate that never applies; claimSignal still lets it apply once
    const retried = seen !== undefined && seen.consumedBy === null && seen.keepUntil <= now;
    if (seen !== undefined && !retried) {
      return { messageId: signal.messageId, status: seen.consumedBy !== null ? 'APPLIED' : 'KEPT', duplicate: true };
    }
    // keyed waits on `name` park in `home` only: their runners share its journal (checkSignalHomes)
    for (const row of await home.waitingFor(name, signal.key, 20)) {
      const step = this.stepOf(row);
      if (step === undefined || row.dueAt <= now) continue;
      // admitKeyed checked the roles and schema of every wait on `name` before the signal was
      // kept: a refusal here would come after its messageId is remembered, and its retry would
      // be taken for a duplicate that never applies
      // the wait takes the signal, then the signal resolves the wait; a wait resolved otherwise gives it back
      if (await home.claimSignal(id, row.waitId)) {
        if (await home.resolve(row.waitId, row.version, { value: 'SIGNAL', data: signal.data }, row.approvals, now)) {
          this.nudge();
          return { messageId: signal.messageId, status: 'APPLIED', duplicate: false, runId: row.runId };
        }
        await home.releaseSignal(id, row.waitId);
      } else {
        // a wait parking meanwhile took it (park.ts)
        return { messageId: signal.messageId, status: 'APPLIED', duplicate: false };
      }
    }
    if (signal.ttlMs === 0 || retried)
      throw new SagawayError('WAIT_NOT_FOUND', 'no run waits for this signal and key (not kept)');
    return { messageId: signal.messageId, status: 'KEPT', duplicate: false };
  }

  /**
   * A correlation signal must suit every wait step of the file that waits on `name` (its roles,
   * its schema): it may be kept and consumed by any of them, without its sender.
   */
  private admitKeyed(name: string, data: unknown, principal: Principal): void {
    let found = false;
    for (const runner of Object.values(this.settings.runners)) {
      for (const saga of runner.plans) {
        for (const step of saga.steps.values()) {
          if (step.type !== 'wait' || step.wait.signal?.name !== name || step.wait.signal.key === undefined) continue;
          found = true;
          const refused = roleRefusal(step.wait.signal.roles, principal);
          if (refused !== undefined) throw new SagawayError(refused, 'the wait needs one of its roles');
          checkSignalBody(step, data);
        }
      }
    }
    if (!found) throw notFound();
  }

  private applied(decided: Decided): Decided {
    if (decided.status !== 'APPROVING') this.nudge();
    return decided;
  }

  /** The API entry's rules for the run's saga (public, or a credential and its roles), then the wait's roles. */
  private admit(row: WaitRow, step: WaitStep, principal: Principal | null): void {
    const api = apiOf(this.settings, row);
    const anonymous = !principal || principal.anonymous;
    if (api !== undefined && !api.public) {
      if (anonymous) throw new SagawayError('UNAUTHORIZED', 'authentication required');
      if (roleRefusal(api.roles, principal) !== undefined)
        throw new SagawayError('FORBIDDEN', 'a required role is missing');
    }
    const roles = step.wait.signal?.roles ?? [];
    if (roles.length > 0) {
      const refused = roleRefusal(roles, principal);
      if (refused !== undefined) throw new SagawayError(refused, 'the wait needs one of its roles');
    }
  }

  private async waitOf(runId: string): Promise<{ store: WaitStore; row: WaitRow; step: WaitStep }> {
    for (const store of this.stores.values()) {
      const row = await store.byRun(runId);
      const step = row && this.stepOf(row);
      if (row && step) return { store, row, step };
    }
    throw notFound();
  }

  private async waitOfToken(token: string): Promise<{ store: WaitStore; row: WaitRow; step: WaitStep }> {
    const claim = this.tokens.verify(token);
    if (claim === undefined) throw notFound();
    if (claim.expiresAt <= this.now()) throw new SagawayError('CALLBACK_EXPIRED', 'the callback link has expired');
    for (const store of this.stores.values()) {
      const row = await store.byId(claim.waitId);
      const step = row && this.stepOf(row);
      if (row && step && row.step === claim.step && row.visit === claim.visit) return { store, row, step };
    }
    // a genuine token whose wait is gone: it was used (the run moved on)
    throw new SagawayError('WAIT_RESOLVED', 'the callback link has been used');
  }

  private stepOf(row: WaitRow): WaitStep | undefined {
    const runner = this.settings.runners[row.runner];
    const step = runner?.plans.find((p) => p.id === row.sagaId)?.steps.get(row.step);
    return step?.type === 'wait' ? step : undefined;
  }
}

/**
 * The journal alias whose wait store keeps the correlation signals named `name`: the journal of
 * the runners with a keyed wait on it (a runner without one: the embedded journal `sagaway
 * start` gives it). checkSignalHomes refuses a file where those runners use several journals.
 */
export function signalHome(settings: Settings, name: string): string | undefined {
  for (const runner of Object.values(settings.runners)) {
    for (const saga of runner.plans) {
      for (const step of saga.steps.values()) {
        if (step.type === 'wait' && step.wait.signal?.name === name && step.wait.signal.key !== undefined) {
          return runner.journal;
        }
      }
    }
  }
  return undefined;
}

function notFound(): SagawayError {
  return new SagawayError('WAIT_NOT_FOUND', 'no such wait');
}

function isReject(data: unknown): boolean {
  return typeof data === 'object' && data !== null && (data as Record<string, unknown>)['decision'] === 'reject';
}

/** The API entry that exposes the run's saga (longest prefix of its path on its runner). */
function apiOf(settings: Settings, row: WaitRow): ApiSettings | undefined {
  const saga = settings.runners[row.runner]?.plans.find((p) => p.id === row.sagaId);
  if (saga === undefined) return undefined;
  const path = saga.path;
  return (settings.gateway?.apis ?? [])
    .filter((a) => a.runner === row.runner && (a.path === '/' || path === a.path || path.startsWith(a.path + '/')))
    .sort((a, b) => b.path.length - a.path.length)[0];
}
