import { Cancel } from '../../core/cancel.js';
import type { SagaResult } from '../../core/types.js';
import { failureProblem } from '../request/outcome.js';
import { problemFor, type Problem } from '../http/helpers/problem.js';
import { deliver, failAll } from './delivery.js';
import { GroupRegistry, type GroupScope, type GroupStart } from './group-registry.js';
import type { MemberHolder, StreamMember, StreamShared } from './member.js';
import { endEvent, endToken, lazyEndToken, nextFits, positionToken, readPage } from './page.js';
import { runStreamPoll } from './poll-run.js';
import { pollKey } from './share.js';
import { waitFor } from './wait.js';
import { formatEntries } from './writer.js';

/**
 * The SSE loop (DESIGN §7), run by a poll group: one or more streams whose next poll is the same
 * saga run (share.ts). The group runs the saga, encodes each `list` entry once as an event whose
 * id is a cursor token, writes the events to every member, then either ends (`continue` is not
 * true) or waits and runs again with `previous` = the last `next`. Invariants:
 * - at most one saga run in flight per group; its signal is aborted the moment the last member
 *   goes, and the group's timer is cleared: nothing outlives the last member;
 * - every member gets each entry exactly once and in order. A member only joins a group at a
 *   poll boundary where the group's next poll is the member's own next poll: a waiting group
 *   whose `previous` equals the member's (after the member delivered its own last batch), or,
 *   for a new connection without a cursor, a group whose first poll is in flight;
 * - a group of one behaves as a stream alone always did: no poll while its socket has unsent data,
 *   at most `maxBuffered` queued, closed after `stallTimeout` of a full socket;
 * - a shared group never waits for one member: a batch that does not fit in a member's
 *   `maxBuffered` is written up to what fits, and a member whose socket has not drained when the
 *   next poll is due (or, for polls less than DRAIN_GRACE_MS apart, that much after the last
 *   batch) is detached: it continues as a group of its own from its last delivered cursor, with
 *   the backpressure rules above (so it is closed after `stallTimeout` with a resumable cursor);
 * - the credential of every member is checked again before every poll after its first.
 * Which group a stream may join is group-registry.ts; writing a batch to the members
 * delivery.ts; what a poll's response means page.ts.
 */

/**
 * How long a shared group whose polls follow each other faster than this waits for its members
 * to drain before it detaches the ones that did not (a feed polled every second or slower waits
 * for nobody: it polls on time). Without it, a feed polled again at once would detach every
 * member whose socket had not emptied in the same instant.
 */
export const DRAIN_GRACE_MS = 200;

/** The groups of one gateway, by the key of their next poll (group-registry.ts), and where streams start. */
export class PollGroups extends GroupRegistry<PollGroup> {
  constructor(readonly shared: StreamShared) {
    super();
  }

  /** Serve a new stream: join a first poll in flight, or a group asleep until its own next poll (maxLifetime's start token); else poll alone. */
  start(member: StreamMember, scope: GroupScope, start: GroupStart): void {
    if (scope.base !== undefined && start.skip === 0) {
      const first = start.previous === undefined;
      const live = first ? this.firstPoll(scope.base) : this.asleep(pollKey(scope.base, start.previous));
      if (live) {
        // The first poll it joins is the one its connect was checked for: the next one rechecks it.
        if (first) member.fresh = false;
        live.add(member);
        return;
      }
    }
    void new PollGroup(this, scope, member, start).run();
  }
}

/** One group: its members and its loop. */
export class PollGroup implements MemberHolder {
  private readonly members = new Set<StreamMember>();
  private readonly shared: StreamShared;
  private previous: unknown;
  private skip: number;
  private halted = false;
  private poll?: Cancel;
  /** saga runs made by this group so far (each poll is a run with its own id) */
  private runs = 0;
  private timer?: NodeJS.Timeout;
  private wake?: () => void;
  private waitingKey?: string;
  private runningKey?: string;
  /** until when a shared group waits for members to drain before its next poll */
  private graceUntil = 0;
  /** when the next poll is due (epoch ms), while asleep */
  private dueAt = 0;
  /** the run's own parameters come from the member that started the group */
  private readonly founder: StreamMember['spec'];
  /** a batch is being written; members whose lifetime ends meanwhile wait in `expiring` */
  private delivering = false;
  private readonly expiring = new Set<StreamMember>();

  constructor(
    private readonly hub: PollGroups,
    private readonly scope: GroupScope,
    founder: StreamMember,
    start: GroupStart,
  ) {
    this.shared = hub.shared;
    this.founder = founder.spec;
    this.previous = start.previous;
    this.skip = start.skip;
    this.shared.metrics.streamGroups++;
    this.add(founder);
  }

  /** Whether a member may still join (the group has not stopped). */
  accepts(): boolean {
    return !this.halted;
  }

  /** Take a member in; it gets this group's next batch. */
  add(member: StreamMember): void {
    const { metrics } = this.shared;
    this.members.add(member);
    member.group = this;
    const n = this.members.size;
    if (n === 2) {
      metrics.sharedGroups++;
      metrics.sharedMembers += 2;
    } else if (n > 2) metrics.sharedMembers++;
  }

  /** A member went away (its stop): the group stops with its last member. */
  leave(member: StreamMember): void {
    this.remove(member);
    if (this.members.size === 0) this.halt();
  }

  private remove(member: StreamMember): void {
    if (!this.members.delete(member)) return;
    if (member.group === this) member.group = undefined;
    const { metrics } = this.shared;
    const n = this.members.size;
    if (n === 1) {
      metrics.sharedGroups--;
      metrics.sharedMembers -= 2;
    } else if (n > 1) metrics.sharedMembers--;
  }

  /** A member's maxLifetime is over (member.ts): close it at its position, after the batch being written. */
  expire(member: StreamMember): void {
    this.expiring.add(member);
    if (!this.delivering) this.closeExpired();
  }

  private closeExpired(): void {
    if (this.expiring.size === 0) return;
    const at = { previous: this.previous, skip: this.skip };
    const token = positionToken(this.shared.cursors, this.scope.path, this.scope.binding, at);
    for (const m of this.expiring) {
      if (this.members.has(m)) m.closeForLifetime(token);
      else if (!m.isClosed) m.group?.expire(m); // detached meanwhile: its own group knows its position
    }
    this.expiring.clear();
  }

  /** Stop the loop: abort the run in flight, clear the timer, unregister, stop the members left. Idempotent. */
  private halt(): void {
    if (this.halted) return;
    this.halted = true;
    this.shared.metrics.streamGroups--;
    this.disarm();
    this.poll?.abort();
    this.wake?.();
    this.unregister();
    for (const m of [...this.members]) m.stop();
  }

  private unregister(): void {
    // the lead of a feed stays its lead while it sleeps: only a stopped group gives that up
    this.hub.release(this, {
      waiting: this.waitingKey,
      running: this.runningKey,
      lead: this.halted ? this.scope.base : undefined,
    });
    this.waitingKey = undefined;
    this.runningKey = undefined;
  }

  /** Run the loop until the stream ends, the last member goes, or the group merges into another. */
  async run(): Promise<void> {
    const { settings, cursors, log } = this.shared;
    const { path, binding } = this.scope;
    try {
      while (!this.halted && (await this.gate())) {
        const previous = this.previous;
        const skip = this.skip;
        const result = await this.runSaga(previous, skip);
        if (this.halted) break;
        if (result.outcome === 'FAIL' || result.outcome === 'TIMEOUT') {
          this.fail(failureProblem(result, this.founder.requestId), previous);
          break;
        }
        const page = readPage(result.response);
        const list = page.list;
        const end = Math.min(list.length, skip + settings.maxEntries);
        const tokens = cursors.batch(path, binding, previous, end);
        const events = formatEntries(list, skip, end, (i) => tokens.entry(i), this.shared.maxResponse);
        if (events === undefined) {
          log.warn({ requestId: this.founder.requestId }, 'stream poll over gateway.limits.maxResponse');
          const detail = 'a poll of this stream is larger than gateway.limits.maxResponse';
          this.fail(problemFor('RESPONSE_TOO_LARGE', this.founder.requestId, detail), previous);
          break;
        }
        this.shared.metrics.entriesEncoded.inc(end - skip);
        if (end < list.length) {
          await this.deliver(events, previous, skip, end - skip);
          // An oversized batch: the rest comes from re-running the same `previous` (as a resume would).
          this.skip = end;
          continue;
        }
        this.skip = 0;
        if (!page.continue) {
          events.push(endEvent(endToken(cursors, path, binding, previous)));
          await this.deliver(events, previous, skip, end - skip);
          break;
        }
        await this.deliver(events, previous, skip, end - skip);
        if (this.halted || this.members.size === 0) break;
        const next = page.next;
        if (next !== undefined) {
          if (!nextFits(next)) {
            const detail = 'the saga answered a next longer than 4 KB as JSON';
            this.fail(problemFor('STREAM_NEXT_TOO_LARGE', this.founder.requestId, detail), previous);
            break;
          }
          this.previous = next;
        }
        const ms = waitFor(page.wait, settings, (value) =>
          log.warn(
            { requestId: this.founder.requestId, wait: String(value).slice(0, 64) },
            'invalid stream wait ignored',
          ),
        );
        this.closeExpired();
        if (this.settle()) return;
        const sleep = this.align(ms);
        this.graceUntil = Date.now() + Math.max(sleep, DRAIN_GRACE_MS);
        await this.sleep(sleep);
        this.unregister();
      }
    } catch (err) {
      log.error({ err, requestId: this.founder.requestId }, 'stream loop failed');
      if (!this.halted) this.fail(problemFor('INTERNAL', this.founder.requestId), this.previous);
    } finally {
      this.halt();
    }
  }

  /**
   * After a batch: join the group that sleeps until the same next poll, if there is one (then
   * this loop ends, true), else sleep as the group others may join.
   */
  private settle(): boolean {
    const base = this.scope.base;
    if (base === undefined || this.skip !== 0 || this.members.size === 0) return false;
    const key = pollKey(base, this.previous);
    const other = this.hub.sleeper(key, this);
    if (other !== undefined) {
      for (const m of [...this.members]) {
        this.remove(m);
        m.fresh = false;
        other.add(m);
      }
      return true;
    }
    this.hub.sleep(key, this);
    this.waitingKey = key;
    return false;
  }

  /**
   * How long to sleep before the next poll: `ms`, or less, to poll at the same moment as the
   * feed's lead group when that comes first. Two groups of one feed whose `previous` differ
   * cannot merge; but a feed whose `next` says "up to now" (a changes feed) answers two polls
   * made at the same moment with the same `next`, and then they merge. Without this, groups
   * formed at different moments would poll out of phase forever, each paying its own run.
   * A group polls earlier than its wait at most once to get in phase, never later.
   */
  private align(ms: number): number {
    const base = this.scope.base;
    const now = Date.now();
    this.dueAt = now + ms;
    if (base === undefined) return ms;
    const lead = this.hub.leadOf(base, this);
    if (lead !== undefined && lead.dueAt > now && lead.dueAt <= this.dueAt) {
      this.dueAt = lead.dueAt;
      return lead.dueAt - now;
    }
    this.hub.lead(base, this);
    return ms;
  }

  /**
   * Before a poll: check the credential of every member that needs it (a refused one gets
   * `event: error` UNAUTHORIZED and goes; the others go on), then wait for the sockets to
   * drain: alone, as long as `stallTimeout`; shared, until the grace ends, then detach the
   * members still full. False when no member is left.
   */
  private async gate(): Promise<boolean> {
    this.closeExpired();
    const due: StreamMember[] = [];
    for (const m of this.members) {
      if (m.fresh) m.fresh = false;
      else if (m.spec.recheck) due.push(m);
    }
    if (due.length > 0) {
      const verdicts = await Promise.all(due.map((m) => m.spec.recheck!().catch(() => false)));
      const endToken = lazyEndToken(this.shared.cursors, this.scope.path, this.scope.binding, this.previous);
      due.forEach((m, i) => {
        if (verdicts[i] || m.isClosed) return;
        m.sendError(problemFor('UNAUTHORIZED', m.spec.requestId), endToken);
        m.stop();
      });
    }
    if (this.halted || this.members.size === 0) return false;
    if (this.members.size === 1) {
      const [only] = this.members;
      return only!.drained();
    }
    let full = [...this.members].filter((m) => m.res.writableNeedDrain);
    if (full.length === 0) return true;
    const left = this.graceUntil - Date.now();
    if (left > 0) await this.drains(full, left);
    full = full.filter((m) => !m.isClosed && m.res.writableNeedDrain);
    for (const m of full) this.detach(m, this.previous, this.skip, true);
    return !this.halted && this.members.size > 0;
  }

  /** Resolves when every member of `full` has drained, or after `ms`. */
  private drains(full: StreamMember[], ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      let pending = full.length;
      const onDrain = (): void => {
        if (--pending === 0) done();
      };
      const done = (): void => {
        for (const m of full) m.res.off('drain', onDrain);
        this.disarm();
        this.wake = undefined;
        resolve();
      };
      for (const m of full) m.res.once('drain', onDrain);
      this.wake = done;
      this.arm(ms, done);
    });
  }

  /** Let `member` go on alone from (`previous`, `skip`), as a group of its own. */
  private detach(member: StreamMember, previous: unknown, skip: number, fresh: boolean): void {
    this.remove(member);
    member.fresh = fresh;
    this.shared.metrics.detached.inc();
    this.shared.log.info({ requestId: member.spec.requestId }, 'stream detached from its poll group');
    void new PollGroup(this.hub, this.scope, member, { previous, skip }).run();
  }

  /**
   * Write a batch (`events`, holding `entries` entries from index `from` of the batch that
   * `previous` produced) to every member (delivery.ts). A shared member without room for all of
   * it is detached at the first entry it did not get.
   */
  private async deliver(events: string[], previous: unknown, from: number, entries: number): Promise<void> {
    this.delivering = true;
    try {
      await deliver(this.members, events, entries, this.shared.metrics, (m, written) =>
        this.detach(m, previous, from + written, false),
      );
    } finally {
      this.delivering = false;
    }
  }

  /** Send `problem` as `event: error` to every member, then end them. */
  private fail(problem: Problem, previous: unknown): void {
    failAll(this.members, problem, lazyEndToken(this.shared.cursors, this.scope.path, this.scope.binding, previous));
  }

  private async runSaga(previous: unknown, skip: number): Promise<SagaResult> {
    const { scope, founder } = this;
    if (scope.base !== undefined && skip === 0 && previous === undefined) {
      const key = pollKey(scope.base, previous);
      if (this.hub.runFirstPoll(key, this)) this.runningKey = key;
    }
    const poll = new Cancel();
    this.poll = poll;
    try {
      return await runStreamPoll(this.shared, scope, founder, previous, `${founder.requestId}.${++this.runs}`, poll);
    } finally {
      if (this.poll === poll) this.poll = undefined;
      this.unregister();
    }
  }

  private arm(ms: number, fn: () => void): void {
    this.disarm();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.shared.metrics.streamTimers--;
      fn();
    }, ms);
    this.shared.metrics.streamTimers++;
  }

  private disarm(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.shared.metrics.streamTimers--;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.halted) return resolve();
      this.wake = () => {
        this.disarm();
        resolve();
      };
      this.arm(ms, () => resolve());
    }).finally(() => {
      this.wake = undefined;
    });
  }
}
