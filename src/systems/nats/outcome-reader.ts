import type { KV } from '@nats-io/kv';
import { SagawayError } from '../../core/errors.js';
import type { OutcomeStatus } from '../../core/messages.js';
import type { OutcomeLookup } from '../system.js';
import type { NatsSystem } from './system.js';
import {
  bucketName,
  correlationKey,
  decodeIndex,
  decodeOutcome,
  outcomeKey,
  statusOfOutcome,
  type OutcomeValue,
} from './outcome-value.js';

/**
 * The reading side of the outcome buckets (outcomes.ts writes them), in the gateway: /api/status
 * of the runners without a journal (issue 13 part 1, docs/distributed.md).
 */

/** How long a reader trusts that a bucket does not exist (a runner creates it when it connects). */
const ABSENT_RECHECK_MS = 2000;

/** The reading side, in the gateway: the buckets of the runners without a journal. */
export class OutcomeReader implements OutcomeLookup {
  private readonly buckets = new Map<string, KV>();
  /** runners whose bucket did not exist, until when that answer is trusted */
  private readonly absentUntil = new Map<string, number>();
  private connectedAt = Number.POSITIVE_INFINITY;

  /**
   * `runners`: the runners whose outcomes are kept in buckets; `isLive(instance)`: whether a
   * process still advertises itself (a RUNNING value of a gone process is shown as LOST).
   */
  constructor(
    private readonly system: NatsSystem,
    private readonly runners: readonly string[],
    private readonly isLive: (instance: string) => boolean,
  ) {
    system.whenConnected(async () => {
      this.connectedAt = Math.min(this.connectedAt, Date.now());
    });
  }

  /**
   * The status of run `id` (a run id, else with `byCorrelation` a correlation id: see
   * core/messages.ts LookupOptions) for the caller `scope`; 503 when the broker is away.
   */
  async lookup(
    scope: string,
    id: string,
    options: { byCorrelation?: boolean } = {},
  ): Promise<OutcomeStatus | undefined> {
    if (this.runners.length === 0) return undefined;
    if (!this.system.isConnected) {
      throw new SagawayError('RUNNER_UNAVAILABLE', `the broker of system "${this.system.name}" is not reachable`);
    }
    const run = await this.first(outcomeKey(scope, id), decodeOutcome);
    if (run) return this.view(run);
    if (options.byCorrelation !== true) return undefined;
    const index = await this.first(correlationKey(scope, id), decodeIndex);
    if (!index) return undefined;
    const byCorrelation = await this.first(outcomeKey(scope, index.requestId), decodeOutcome);
    return byCorrelation && this.view(byCorrelation);
  }

  private view(v: OutcomeValue): OutcomeStatus {
    // Liveness is known once advertisements had time to arrive (runners answer a query at once).
    const knows = Date.now() - this.connectedAt > 1000;
    return statusOfOutcome(v, knows && v.status === 'RUNNING' && !this.isLive(v.owner));
  }

  /** The value under `key` in the first bucket that has one. */
  private async first<T>(key: string, decode: (data: Uint8Array) => T | undefined): Promise<T | undefined> {
    const found = await Promise.all(this.runners.map((r) => this.get(r, key, decode)));
    return found.find((v) => v !== undefined);
  }

  private async get<T>(
    runner: string,
    key: string,
    decode: (data: Uint8Array) => T | undefined,
  ): Promise<T | undefined> {
    try {
      const kv = await this.bucket(runner);
      const entry = kv && (await kv.get(key));
      return entry && entry.operation === 'PUT' ? decode(entry.value) : undefined;
    } catch (err) {
      this.buckets.delete(runner); // asked again next time (a broker restarted without its storage)
      throw new SagawayError('RUNNER_UNAVAILABLE', 'the status bucket could not be read', { cause: err });
    }
  }

  /**
   * The bucket of a runner, or undefined when it does not exist (no run of that runner was
   * recorded on this broker yet: nothing to find). A direct get on a missing bucket would wait
   * for its timeout, so existence is asked first: once per bucket, again after ABSENT_RECHECK_MS.
   */
  private async bucket(runner: string): Promise<KV | undefined> {
    const known = this.buckets.get(runner);
    if (known) return known;
    if ((this.absentUntil.get(runner) ?? 0) > Date.now()) return undefined;
    const name = bucketName(this.system.names, runner);
    const { client, manager } = this.system.jetstream();
    const { JetStreamApiError, JetStreamApiCodes } = await import('@nats-io/jetstream');
    const exists = await manager.streams.info(`KV_${name}`).then(
      () => true,
      (err: unknown) => {
        // by the server's JetStream code, not by the message's words
        if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return false;
        throw err;
      },
    );
    if (!exists) {
      this.absentUntil.set(runner, Date.now() + ABSENT_RECHECK_MS);
      return undefined;
    }
    const { Kvm } = await import('@nats-io/kv');
    const kv = await new Kvm(client).open(name, { allow_direct: true });
    this.buckets.set(runner, kv);
    return kv;
  }
}
