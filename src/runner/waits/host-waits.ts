import type { RunnerSettings, Settings } from '../../config/settings.js';
import type { Logger } from '../../core/logger.js';
import type { SagaResult } from '../../core/types.js';
import { createWaitStore } from '../../states/waits/open.js';
import type { WaitStats, WaitStore } from '../../states/waits/store.js';
import { WaitPoller } from './poller.js';
import type { WaitRunner } from './resume.js';
import type { RunnerWaits } from './runner-hooks.js';
import { CallbackTokens } from './tokens.js';
import { WaitSignals } from './service.js';
import { hasWaits } from './check.js';

/**
 * The waits of one process (issue 21): one wait store per journal state that a runner with a
 * `wait` step uses, the callback token signer, the clock, and one poller per such runner.
 * Host (runner/host.ts) makes it; the gateway of the same process reaches the stores through
 * it (service.ts), a gateway elsewhere opens its own (`waitStores`).
 */

/** The waits' clock: epoch ms. Tests move it (72 h in a millisecond). */
export interface WaitClock {
  now(): number;
}

/** The wait stores of a configuration's journals (runners with a wait step), by journal alias. */
export function waitStores(settings: Settings): Map<string, WaitStore> {
  const stores = new Map<string, WaitStore>();
  for (const runner of Object.values(settings.runners)) {
    const alias = runner.journal;
    const state = alias === undefined ? undefined : settings.states[alias];
    if (state === undefined || alias === undefined || stores.has(alias) || !hasWaits(runner)) continue;
    stores.set(alias, createWaitStore(state));
  }
  return stores;
}

export class HostWaits {
  readonly stores: Map<string, WaitStore>;
  readonly tokens: CallbackTokens;
  readonly now: () => number;
  private readonly pollers: WaitPoller[] = [];
  private readonly listeners = new Set<(runId: string, result: SagaResult) => void>();

  constructor(
    private readonly settings: Settings,
    private readonly log: Logger,
    clock: WaitClock | undefined,
  ) {
    this.stores = waitStores(settings);
    this.tokens = new CallbackTokens(settings.gateway?.stream?.cursorKey);
    this.now = clock ? () => clock.now() : Date.now;
  }

  /** What a runner's deps get (undefined: the runner has no wait step, or no journal). */
  bindingFor(runner: RunnerSettings): RunnerWaits | undefined {
    const store = runner.journal === undefined ? undefined : this.stores.get(runner.journal);
    if (store === undefined || !hasWaits(runner)) return undefined;
    return {
      store,
      tokens: this.tokens,
      now: this.now,
      ended: (runId, result) => {
        for (const listener of this.listeners) listener(runId, result);
      },
    };
  }

  /** Start polling for the runners that park (their WaitRunners, runner.ts waitRunner). */
  start(
    runners: readonly (WaitRunner & {
      readonly deployment: string;
      journalAlias: string;
      /** runners.R.waitPoll and waitLease, in ms */
      pollMs: number;
      leaseMs: number;
    })[],
  ): void {
    for (const runner of runners) {
      const store = this.stores.get(runner.journalAlias);
      if (store === undefined) continue;
      const poller = new WaitPoller(runner, store, this.now, runner.pollMs, runner.leaseMs);
      poller.start();
      this.pollers.push(poller);
    }
    if (this.pollers.length > 0) this.log.debug({ pollers: this.pollers.length }, 'wait pollers started');
  }

  /** Poll every runner's waits now; resolves with how many were taken, once their runs moved on. */
  async poll(): Promise<number> {
    const counts = await Promise.all(this.pollers.map((p) => p.poll()));
    return counts.reduce((a, b) => a + b, 0);
  }

  /** A wait was resolved in this process: resume it without waiting for the next poll. */
  nudge(): void {
    for (const p of this.pollers) p.nudge();
  }

  /** The signals, cancels and callbacks of this process's gateway (gateway/waits/routes.ts). */
  signals(): WaitSignals {
    return new WaitSignals(
      this.settings,
      this.stores,
      this.tokens,
      this.now,
      () => this.nudge(),
      (listener) => this.onEnded((runId) => listener(runId)),
    );
  }

  /** Be told when a resumed run ends (Prefer: wait). Returns the unsubscribe. */
  onEnded(listener: (runId: string, result: SagaResult) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Parked runs, due waits and kept signals over every store. */
  async stats(): Promise<WaitStats> {
    const now = this.now();
    const all = await Promise.all([...this.stores.values()].map((s) => s.stats(now)));
    return all.reduce((a, b) => ({ parked: a.parked + b.parked, due: a.due + b.due, kept: a.kept + b.kept }), {
      parked: 0,
      due: 0,
      kept: 0,
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.pollers.map((p) => p.close()));
    await Promise.all([...this.stores.values()].map((s) => s.close().catch(() => undefined)));
  }
}

/**
 * The wait routes of a gateway without runners (`sagaway gateway`): it opens the runners' wait
 * stores itself and only writes resolutions; the runners' pollers resume the runs (within their
 * poll interval).
 */
export function gatewaySignals(settings: Settings): { signals: WaitSignals; close(): Promise<void> } {
  const stores = waitStores(settings);
  return {
    signals: new WaitSignals(settings, stores, new CallbackTokens(settings.gateway?.stream?.cursorKey), Date.now),
    close: async () => {
      await Promise.all([...stores.values()].map((s) => s.close().catch(() => undefined)));
    },
  };
}
