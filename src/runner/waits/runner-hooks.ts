import type { Lineage } from '../../core/lineage.js';
import type { Logger } from '../../core/logger.js';
import type { RequestContext, SagaResult } from '../../core/types.js';
import type { EngineDeps } from '../../saga/engine.js';
import type { CompiledSaga } from '../../saga/graph.js';
import type { State } from '../../states/state.js';
import type { WaitStore } from '../../states/waits/store.js';
import type { Journal } from '../orchestrator/journal.js';
import type { JournalData } from '../orchestrator/journal-record.js';
import { parkHook } from './park.js';
import type { WaitRunner } from './resume.js';
import type { CallbackTokens } from './tokens.js';

/** What a journaled runner gets for its waits (Host: runner/waits/host-waits.ts). */
export interface RunnerWaits {
  store: WaitStore;
  tokens: CallbackTokens;
  /** the waits' clock (due times, the poller); tests move it */
  now: () => number;
  /** told when a resumed run ended (Prefer: wait, metrics) */
  ended?(runId: string, result: SagaResult): void;
}

/** The runner's private parts the hooks use, handed in by runner.ts. */
interface Own {
  engineDeps(): EngineDeps;
  saga(id: string): CompiledSaga | undefined;
  rootLineage(): Lineage;
  afterRun(saga: CompiledSaga, d: JournalData, context: RequestContext, result: SagaResult, lineage: Lineage): void;
}

/** The WaitRunner of a runner (runner.ts waitRunner), for the park hooks, the poller and resumes. */
export function waitRunnerOf(
  runner: { readonly name: string; readonly deployment: string },
  deps: {
    journal?: Journal;
    waits?: RunnerWaits;
    log: Logger;
    runner: { journal?: string };
    state(alias: string): State;
  },
  own: Own,
): WaitRunner & { readonly deployment: string } {
  const journal = deps.journal;
  const waits = deps.waits;
  if (!journal || !waits || deps.runner.journal === undefined) throw new Error('waits need a journal');
  return {
    name: runner.name,
    deployment: runner.deployment,
    instance: journal.instance,
    log: deps.log,
    journal,
    journalState: deps.state(deps.runner.journal),
    saga: own.saga,
    engineDeps: own.engineDeps,
    rootLineage: own.rootLineage,
    afterRun(saga, d, context, result, lineage) {
      waits.ended?.(d.runId, result);
      own.afterRun(saga, d, context, result, lineage);
    },
    parkHook(saga, entry, runId) {
      const engine = own.engineDeps();
      return parkHook({
        store: waits.store,
        journal,
        entry,
        saga,
        runId,
        runner: runner.name,
        deployment: runner.deployment,
        instance: journal.instance,
        now: waits.now,
        tokens: waits.tokens,
        log: deps.log,
        dispatch: (event, cancel) => Promise.resolve(engine.dispatch(event, cancel)),
      });
    },
  };
}
