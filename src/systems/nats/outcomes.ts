import type { MsgHdrs } from '@nats-io/transport-node';
import { keepBounded } from '../../core/bounded-map.js';
import type { Logger } from '../../core/logger.js';
import type { SagaResult } from '../../core/types.js';
import type { OutcomeHandle as PortHandle, OutcomeWriter, RecordedRunner } from '../system.js';
import { JetStreamPublishError, pubAckSequence } from './request-mux.js';
import type { NatsSystem } from './system.js';
import {
  bucketName,
  correlationKey,
  encodeDone,
  encodeIndex,
  encodeRunning,
  outcomeHead,
  outcomeKey,
  type OutcomeFixed,
  type OutcomeValue,
} from './outcome-value.js';

/**
 * Outcomes without a journal (issue 13 part 1, docs/distributed.md): in distributed mode a runner
 * without a journal keeps each gateway run's status in a JetStream key-value bucket of its own,
 * `<prefix>_status_<runner>`, for `runners.R.statusTtl`, and gateways read it for /api/status
 * (outcome-reader.ts). This file is the writing side.
 *
 * - nats-server 2.9 has no per-key TTL (that is 2.11's `allow_msg_ttl`): the bucket's `max_age`
 *   is the TTL. A run's key is written twice (RUNNING, then DONE), history 1, so max_age counts
 *   from the last write. Changing statusTtl updates the bucket's max_age at the next start.
 * - Writes never hold up the response: a put is a plain publish on the key's subject, written
 *   into the connection's buffer synchronously; no acknowledgement is awaited (one put in
 *   ACK_SAMPLE asks for one, only to notice and log a bucket that refuses writes). Because the
 *   DONE value is put before the runner answers the gateway, on the same connection, a reply
 *   that reached the gateway means the value reached the server first (one TCP stream, read in
 *   order): an acknowledged run's outcome is not lost when the runner dies right after.
 * - Bounded: values are capped at `runners.R.statusMaxSize` (outcome-value.ts encodeOutcome) and
 *   the bucket's max_msg_size; no per-put state is kept (at most MAX_UNACKED sampled
 *   acknowledgements are awaited); while the broker is away, a run's values are held (the last
 *   one per run, at most MAX_HELD runs) and put when it is back, the correlation index is skipped.
 */

/** One put in this many asks for the server's acknowledgement (failures are noticed, not paid for on every put). */
const ACK_SAMPLE = 64;
/** Sampled puts awaiting their acknowledgement at most; beyond, puts are sent without asking. */
const MAX_UNACKED = 100;
/** JetStream's error code for a put whose expected last sequence does not match (the key has a value). */
const WRONG_LAST_SEQUENCE = 10071;
/** Room for the KV headers over the value cap, in the bucket's max_msg_size. */
const HEADER_ROOM = 1024;
/** Outcomes held while the broker is away, at most (the newest are kept). */
const MAX_HELD = 10_000;
/** How often a skipped or failed write is logged at most. */
const LOG_EVERY_MS = 10_000;

/** A run being recorded. */
export interface OutcomeHandle extends PortHandle {
  /** the fields that never change */
  readonly fixed: OutcomeFixed;
  /** their JSON of the fields that never change, without its closing brace (outcome-value.ts outcomeHead) */
  readonly head: string;
}

/** The writing side, in the runner process: one per runner without a journal. */
export class OutcomeRecorder implements OutcomeWriter {
  private opened = false;
  private readonly subjectPrefix: string;
  /** the header of a put that only writes a key without a value (Nats-Expected-Last-Subject-Sequence: 0) */
  private firstWins: MsgHdrs | undefined;
  private writes = 0;
  private unacked = 0;
  /** writes skipped (no bucket yet, broker away) or refused, as far as sampled acknowledgements tell */
  lost = 0;
  private lastLog = 0;
  private readonly bucket: string;
  private readonly log: Logger;
  /**
   * Values put while the broker was away, by key (the last one of a key wins), written when it
   * is back (issue 26): a run that ended during an outage would otherwise stay RUNNING in the
   * bucket while its owner lives, and a retry with its Idempotency-Key would wait for it.
   */
  private readonly held = new Map<string, Uint8Array>();

  constructor(
    private readonly system: NatsSystem,
    private readonly runner: RecordedRunner,
    private readonly instance: string,
    log: Logger,
  ) {
    this.bucket = bucketName(system.names, runner.name);
    this.subjectPrefix = `$KV.${this.bucket}.`;
    this.log = log.child({ bucket: this.bucket });
    system.whenConnected(() => this.open());
  }

  /**
   * Create the bucket, or bring an existing one to the configured TTL and size cap; again after
   * every reconnection (a broker restarted without its storage has forgotten it).
   */
  private async open(): Promise<void> {
    const { Kvm } = await import('@nats-io/kv');
    const { nanos, headers } = await import('@nats-io/transport-node');
    const maxMsg = this.runner.statusMaxBytes + HEADER_ROOM;
    const { client, manager: jsm } = this.system.jetstream();
    await new Kvm(client).create(this.bucket, {
      history: 1,
      ttl: this.runner.statusTtlMs,
      maxValueSize: maxMsg,
      description: `sagaway: outcomes of runner ${this.runner.name} for /api/status`,
    });
    const stream = `KV_${this.bucket}`;
    const info = await jsm.streams.info(stream);
    const maxAge = nanos(this.runner.statusTtlMs);
    if (info.config.max_age !== maxAge || info.config.max_msg_size !== maxMsg) {
      await jsm.streams.update(stream, { ...info.config, max_age: maxAge, max_msg_size: maxMsg });
    }
    this.firstWins = headers();
    this.firstWins.set('Nats-Expected-Last-Subject-Sequence', '0');
    this.opened = true;
    this.flushHeld();
  }

  /** Put the values held during an outage (open(), after every reconnection). */
  private flushHeld(): void {
    if (!this.system.isConnected || this.held.size === 0) return;
    const count = this.held.size;
    for (const [key, value] of this.held) this.system.publish(`${this.subjectPrefix}${key}`, value);
    this.held.clear();
    this.log.info({ count }, 'outcomes held during the outage written');
  }

  /** Whether the bucket is open (writes are accepted). */
  get ready(): boolean {
    return this.opened;
  }

  /** Record that a run started (RUNNING), and index the caller's correlation id (first run wins). */
  begin(scope: string, requestId: string, correlationId: string | undefined): OutcomeHandle {
    const now = Date.now();
    // correlationId undefined is left out of the JSON
    const fixed: OutcomeFixed = {
      v: 1,
      requestId,
      correlationId,
      runner: this.runner.name,
      deployment: this.runner.deployment,
      owner: this.instance,
      startedAt: now,
    };
    const handle: OutcomeHandle = { key: outcomeKey(scope, requestId), fixed, head: outcomeHead(fixed) };
    this.put(handle.key, encodeRunning(handle.head, now), false);
    if (correlationId !== undefined) {
      const index = encodeIndex(requestId);
      this.put(correlationKey(scope, correlationId), index, true);
    }
    return handle;
  }

  /** Record the outcome (DONE). Call before the result is sent back (see the ordering note above). */
  end(h: PortHandle, result: SagaResult): void {
    // only handles of begin() come here (the port's handle is opaque to the runner)
    const handle = h as OutcomeHandle;
    const now = Date.now();
    const full = (): OutcomeValue => ({
      ...handle.fixed,
      status: 'DONE',
      outcome: result.outcome,
      http: result.http,
      ...(result.response !== undefined ? { response: result.response } : {}),
      ...(result.error ? { error: result.error } : {}),
      updatedAt: now,
    });
    this.put(handle.key, encodeDone(handle.head, result, now, this.runner.statusMaxBytes, full), false);
  }

  /**
   * Hand a put to the connection now. It is a plain publish on the key's subject (what a KV put
   * is), so it costs one buffered write and no request state; one put in ACK_SAMPLE asks for the
   * server's acknowledgement, so that a bucket that refuses writes (deleted, storage full) is
   * noticed and logged. `create`: only if the key has no value yet (the server drops the put
   * otherwise: first wins).
   */
  private put(key: string, value: Uint8Array, create: boolean): void {
    // Before this process has opened the bucket, it usually exists already (another replica, an
    // earlier start): the put is sent anyway, and lands as soon as the bucket is there.
    if (!this.system.isConnected || (create && !this.firstWins)) {
      if (!create) {
        // kept for the reconnection (flushHeld); the oldest goes first past the bound
        keepBounded(this.held, key, value, MAX_HELD);
        return;
      }
      this.failed('outcome not kept: the status bucket is not reachable');
      return;
    }
    const subject = `${this.subjectPrefix}${key}`;
    const options = create ? { headers: this.firstWins } : undefined;
    if (++this.writes % ACK_SAMPLE !== 0 || this.unacked >= MAX_UNACKED) {
      this.system.publish(subject, value, options);
      return;
    }
    this.unacked++;
    this.system.request(subject, value, { timeout: this.system.settings.publishTimeoutMs, ...options }).then(
      (msg) => {
        this.unacked--;
        try {
          pubAckSequence(msg.data);
        } catch (err) {
          // A correlation id that an earlier run of the caller already has keeps pointing there.
          const taken = err instanceof JetStreamPublishError && err.errCode === WRONG_LAST_SEQUENCE;
          if (!(create && taken)) this.failed('outcome not kept', err as Error);
        }
      },
      (err: unknown) => {
        this.unacked--;
        this.failed('outcome not kept', err as Error);
      },
    );
  }

  private failed(message: string, err?: { message?: unknown; description?: unknown }): void {
    this.lost++;
    const now = Date.now();
    if (now - this.lastLog < LOG_EVERY_MS) return;
    this.lastLog = now;
    this.log.warn({ lost: this.lost, ...(err ? { err: String(err.message ?? err.description) } : {}) }, message);
  }
}
