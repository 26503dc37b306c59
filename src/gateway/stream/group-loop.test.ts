import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { StreamSettings } from '../../config/settings.js';
import type { SagaRequest, SagaResult } from '../../core/types.js';
import { silentLogger } from '../../core/logger.js';
import { GatewayMetrics } from '../http/helpers/metrics.js';
import { CursorCodec } from './cursor.js';
import { PollGroups } from './group.js';
import type { GroupScope, GroupStart } from './group-registry.js';
import { StreamRegistry } from './limits.js';
import { StreamMember, type StreamShared } from './member.js';

/**
 * The poll group's loop (group.ts) driven in process, without sockets or timers of its own: each
 * saga run is held until the test answers it, and each stream writes into a recording response.
 * So the order of a race (a resume arriving while another stream's first poll is in flight) is
 * set by the test, not by the scheduler. Written against the mutants of group.ts that the stream
 * tests over HTTP let through (TESTING.md).
 */

const KEY = 'group-loop-test-key';
const PATH = '/feed';
const BINDING = 'caller:alice';

/** A response that records what is written and never fills up. */
class RecordingResponse extends EventEmitter {
  text = '';
  writableLength = 0;
  writableNeedDrain = false;
  writableEnded = false;
  destroyed = false;
  write(chunk: string | Buffer): boolean {
    this.text += String(chunk);
    return true;
  }
  end(): void {
    this.writableEnded = true;
    this.emit('close');
  }
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

interface Run {
  req: SagaRequest;
  answer(result: SagaResult): void;
  /** the service throws instead of answering */
  fail(err: Error): void;
}

/** Every rig's streams are stopped after each test, also after a failed one (no timer left). */
const open: { close(): void }[] = [];
afterEach(() => {
  for (const r of open.splice(0)) r.close();
});

/** A gateway's stream machinery around a saga service whose runs the test answers one by one. */
function rig(over: Partial<StreamSettings> = {}, maxResponse = 1 << 20) {
  const runs: Run[] = [];
  const waiters: (() => void)[] = [];
  const settings: StreamSettings = {
    defaultWaitMs: 60_000,
    minWaitMs: 0,
    maxWaitMs: 600_000,
    heartbeatMs: 600_000,
    maxPerClient: 100,
    maxStreams: 100,
    stallTimeoutMs: 600_000,
    maxEntries: 1000,
    maxBuffered: 1 << 20,
    share: 'caller',
    ...over,
  };
  const metrics = new GatewayMetrics({ defaultMetrics: false });
  const shared: StreamShared = {
    settings,
    timeoutMs: 30_000,
    maxResponse,
    service: {
      run: (_runner, req) =>
        new Promise<SagaResult>((resolve, reject) => {
          runs.push({ req, answer: resolve, fail: reject });
          for (const w of waiters.splice(0)) w();
        }),
    },
    cursors: new CursorCodec(KEY),
    registry: new StreamRegistry(100, 100),
    metrics,
    log: silentLogger() as unknown as FastifyBaseLogger,
  };
  const groups = new PollGroups(shared);
  const members: { member: StreamMember; res: RecordingResponse }[] = [];

  const scope = (base: string | undefined): GroupScope => ({
    runner: 'main',
    method: 'GET',
    path: PATH,
    input: { q: 1 },
    query: {},
    binding: BINDING,
    ...(base === undefined ? {} : { base }),
    anonymous: false,
  });

  const it = {
    runs,
    metrics,
    groups,
    /** open a stream from `start` (a new connection: { skip: 0 }) */
    open(start: GroupStart = { skip: 0 }, base?: string | null, recheck?: () => Promise<boolean>) {
      const res = new RecordingResponse();
      const member = new StreamMember(
        shared,
        {
          requestId: `r${members.length + 1}`,
          principal: { sub: 'alice', roles: [], claims: {}, anonymous: false },
          client: 'c',
          ...(recheck === undefined ? {} : { recheck }),
        },
        res as unknown as ServerResponse,
      );
      members.push({ member, res });
      // null: a stream that shares with nobody (`share: off`)
      groups.start(member, scope(base === null ? undefined : (base ?? 'feed-base')), start);
      return { member, res };
    },
    /** resolves once `n` runs have been asked for; fails when they are not within seconds */
    async runsAsked(n: number): Promise<void> {
      const limit = Date.now() + 5000;
      while (runs.length < n) {
        assert.ok(Date.now() < limit, `${n} saga runs expected, ${runs.length} asked for`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, 100);
          waiters.push(() => {
            clearTimeout(t);
            r();
          });
        });
      }
    },
    close() {
      for (const { member } of members) member.stop();
    },
  };
  open.push(it);
  return it;
}

/** The events a response received: entry data by decoded index, and the other events. */
function events(res: RecordingResponse) {
  const codec = new CursorCodec(KEY);
  return res.text
    .split('\n\n')
    .filter((block) => block !== '' && !block.startsWith(':'))
    .map((block) => {
      const field = (name: string) =>
        block
          .split('\n')
          .find((l) => l.startsWith(`${name}: `))
          ?.slice(name.length + 2);
      const id = field('id');
      return {
        event: field('event'),
        data: field('data'),
        at: id === undefined ? undefined : codec.decode(PATH, BINDING, id),
      };
    });
}

const batch = (entries: unknown[], more: Record<string, unknown> = {}): SagaResult => ({
  outcome: 'SUCCESS',
  http: 200,
  response: { list: entries, ...more },
});

/** Lets every pending promise reaction run (the loop's steps after an answered run). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((r) => setImmediate(r));
}

test('a new stream without a cursor joins a first poll in flight: one run, every entry to both', async () => {
  const r = rig();
  const a = r.open();
  await r.runsAsked(1);
  const b = r.open();
  await settle();
  assert.equal(r.runs.length, 1, 'b shares a’s first poll');
  assert.equal(r.metrics.sharedGroups, 1);
  r.runs[0]!.answer(batch(['x', 'y']));
  await settle();
  for (const s of [a, b]) {
    const got = events(s.res);
    assert.deepEqual(
      got.map((e) => e.data),
      ['"x"', '"y"', '{"reason":"complete"}'],
    );
    assert.deepEqual(
      got.map((e) => e.event),
      [undefined, undefined, 'end'],
    );
    assert.deepEqual(
      got.map((e) => e.at),
      [
        { index: 0, end: false },
        { index: 1, end: false },
        { index: -1, end: true },
      ],
    );
    assert.equal(s.member.isClosed, true, 'a stream that does not continue ends');
  }
  assert.equal(r.metrics.streamGroups, 0);
  assert.equal(r.metrics.sharedGroups, 0);
  assert.equal(r.metrics.sharedMembers, 0);
  assert.equal(r.groups.running.size, 0, 'nothing stays registered');
});

test('a resume inside the first batch does not join another stream’s first poll: it gets only what it missed', async () => {
  const r = rig();
  const a = r.open();
  await r.runsAsked(1);
  const b = r.open({ skip: 2 });
  await settle();
  assert.equal(r.runs.length, 2, 'the resume polls on its own');
  assert.equal(r.metrics.sharedGroups, 0);
  for (const run of r.runs) {
    assert.deepEqual(run.req.input, { q: 1 }, 'both are first-batch polls');
    run.answer(batch(['e0', 'e1', 'e2', 'e3']));
  }
  await settle();
  assert.deepEqual(
    events(a.res).map((e) => e.at?.index),
    [0, 1, 2, 3, -1],
  );
  assert.deepEqual(
    events(b.res).map((e) => e.at?.index),
    [2, 3, -1],
    'entries 0 and 1 are not sent again',
  );
  assert.equal(r.metrics.entriesEncoded.value, 4 + 2, 'each entry encoded once per poll');
  assert.equal(r.metrics.entriesWritten.value, 4 + 2);
  assert.deepEqual(
    events(b.res).map((e) => e.data),
    ['"e2"', '"e3"', '{"reason":"complete"}'],
  );
});

test('a new stream does not join a resume’s poll of the first batch either (it would miss the skipped entries)', async () => {
  const r = rig();
  const resumed = r.open({ skip: 2 });
  await r.runsAsked(1);
  const fresh = r.open();
  await settle();
  assert.equal(r.runs.length, 2, 'the new stream polls on its own');
  for (const run of r.runs) run.answer(batch(['e0', 'e1', 'e2']));
  await settle();
  assert.deepEqual(
    events(fresh.res).map((e) => e.at?.index),
    [0, 1, 2, -1],
  );
  assert.deepEqual(
    events(resumed.res).map((e) => e.at?.index),
    [2, -1],
  );
});

test('a stream with a cursor polls with its previous; streams that share nothing never join', async () => {
  const r = rig();
  r.open();
  await r.runsAsked(1);
  r.open({ skip: 0, previous: { page: 2 } });
  r.open({ skip: 0 }, null);
  await r.runsAsked(3);
  await settle();
  assert.equal(r.runs.length, 3);
  assert.deepEqual(r.runs[1]!.req.input, { q: 1, previous: { page: 2 } });
  assert.equal(r.metrics.sharedGroups, 0);
  // each poll is a run of its own, with the founder's request id and the caller as user
  assert.equal(r.runs[0]!.req.runId, 'r1.1');
  assert.equal(r.runs[1]!.req.runId, 'r2.1');
  assert.equal(r.runs[0]!.req.user?.sub, 'alice');
  assert.equal(r.runs[0]!.req.caller, 'c');
  r.close();
  await settle();
  assert.equal(r.runs[0]!.req.signal!.aborted, true, 'the last member gone aborts the run in flight');
  assert.equal(r.metrics.streamGroups, 0);
});

test('continue: the next poll runs with previous = next; a batch over maxEntries is re-run from where it stopped', async () => {
  const r = rig({ maxEntries: 2 });
  const a = r.open();
  await r.runsAsked(1);
  r.runs[0]!.answer(batch(['a', 'b', 'c'], { continue: true, next: 'n1', wait: 0 }));
  await r.runsAsked(2);
  assert.deepEqual(r.runs[1]!.req.input, { q: 1 }, 'the rest of the first batch: same previous');
  r.runs[1]!.answer(batch(['a', 'b', 'c'], { continue: true, next: 'n1', wait: 0 }));
  await r.runsAsked(3);
  assert.deepEqual(r.runs[2]!.req.input, { q: 1, previous: 'n1' });
  assert.equal(r.runs[2]!.req.runId, 'r1.3');
  r.runs[2]!.answer(batch(['d']));
  await settle();
  const got = events(a.res);
  assert.deepEqual(
    got.map((e) => e.data),
    ['"a"', '"b"', '"c"', '"d"', '{"reason":"complete"}'],
  );
  assert.deepEqual(
    got.map((e) => [e.at?.previous, e.at?.index]),
    [
      [undefined, 0],
      [undefined, 1],
      [undefined, 2],
      ['n1', 0],
      ['n1', -1],
    ],
  );
  assert.equal(a.member.isClosed, true);
});

test('an absent or null next keeps the previous; a next of 4 KB is taken, over it ends the stream', async () => {
  const r = rig();
  const a = r.open({ skip: 0, previous: 'p0' });
  await r.runsAsked(1);
  r.runs[0]!.answer(batch([], { continue: true, wait: 0 }));
  await r.runsAsked(2);
  assert.deepEqual(r.runs[1]!.req.input, { q: 1, previous: 'p0' }, 'no next');
  r.runs[1]!.answer(batch([], { continue: true, next: null, wait: 0 }));
  await r.runsAsked(3);
  assert.deepEqual(r.runs[2]!.req.input, { q: 1, previous: 'p0' }, 'next: null');
  const limit = 'x'.repeat(4094); // 4096 characters as JSON
  r.runs[2]!.answer(batch([], { continue: true, next: limit, wait: 0 }));
  await r.runsAsked(4);
  assert.deepEqual(r.runs[3]!.req.input, { q: 1, previous: limit });
  r.runs[3]!.answer(batch(['z'], { continue: true, next: limit + 'x', wait: 0 }));
  await settle();
  assert.equal(r.runs.length, 4);
  const last = events(a.res).at(-1)!;
  assert.equal(last.event, 'error');
  assert.equal(JSON.parse(last.data!).code, 'STREAM_NEXT_TOO_LARGE');
  assert.deepEqual(last.at, { previous: limit, index: -1, end: true }, 'the end token of the poll it failed on');
  assert.equal(a.member.isClosed, true);
});

test('a run that times out, and a poll over maxResponse, end the stream with event: error', async () => {
  const r = rig();
  const a = r.open();
  await r.runsAsked(1);
  r.runs[0]!.answer({ outcome: 'TIMEOUT', http: 504, error: { code: 'SAGA_TIMEOUT', message: 'late', http: 504 } });
  await settle();
  assert.deepEqual(
    events(a.res).map((e) => [e.event, JSON.parse(e.data!).code]),
    [['error', 'SAGA_TIMEOUT']],
  );
  const small = rig({}, 100);
  const b = small.open();
  await small.runsAsked(1);
  small.runs[0]!.answer(batch(['y'.repeat(200)]));
  await settle();
  const got = events(b.res);
  assert.deepEqual(
    got.map((e) => [e.event, JSON.parse(e.data!).code]),
    [['error', 'RESPONSE_TOO_LARGE']],
  );
  assert.equal(b.member.isClosed, true);
  assert.equal(small.metrics.entriesEncoded.value, 0);
});

test('a failed run ends every member with event: error', async () => {
  const r = rig();
  const a = r.open();
  await r.runsAsked(1);
  const b = r.open();
  await settle();
  r.runs[0]!.answer({ outcome: 'FAIL', http: 409, error: { code: 'OUT_OF_STOCK', message: 'none left', http: 409 } });
  await settle();
  for (const s of [a, b]) {
    const got = events(s.res);
    assert.equal(got.length, 1);
    assert.equal(got[0]!.event, 'error');
    assert.equal(JSON.parse(got[0]!.data!).code, 'OUT_OF_STOCK');
    assert.equal(s.member.isClosed, true);
  }
});

test('after a batch, a group joins the group that waits for the same next poll', async () => {
  const r = rig();
  const a = r.open();
  await r.runsAsked(1);
  r.runs[0]!.answer(batch(['e0', 'e1'], { continue: true, next: 'n1' }));
  await settle();
  assert.equal(r.groups.waiting.size, 1, 'a sleeps until its next poll');
  // b resumes after the last entry of the same batch: its next poll is a's next poll
  const b = r.open({ skip: 2 });
  await r.runsAsked(2);
  r.runs[1]!.answer(batch(['e0', 'e1'], { continue: true, next: 'n1' }));
  await settle();
  assert.equal(r.metrics.sharedGroups, 1, 'b joined a');
  assert.equal(r.metrics.sharedMembers, 2);
  assert.equal(r.metrics.streamGroups, 1);
  assert.equal(r.groups.waiting.size, 1);
  assert.deepEqual(
    events(b.res).map((e) => e.at?.index),
    [],
    'b had everything of that batch',
  );
  // a stream of another batch does not join
  const c = r.open({ skip: 0, previous: 'other' });
  await r.runsAsked(3);
  r.runs[2]!.answer(batch([], { continue: true, next: 'n9' }));
  await settle();
  assert.equal(r.metrics.streamGroups, 2);
  assert.equal(r.groups.waiting.size, 2);
  a.member.stop();
  assert.equal(r.metrics.sharedGroups, 0);
  assert.equal(b.member.isClosed, false, 'b goes on with the group');
  b.member.stop();
  c.member.stop();
  assert.equal(r.metrics.streamGroups, 0);
  assert.equal(r.groups.waiting.size, 0);
  assert.equal(r.groups.leads.size, 0);
  assert.equal(r.metrics.streamTimers, 0, 'no timer outlives the streams');
});

test('shared: a member without room for the batch gets what fits, then goes on alone from there', async () => {
  const r = rig({ maxBuffered: 300 });
  const a = r.open();
  await r.runsAsked(1);
  const b = r.open();
  await settle();
  assert.equal(r.metrics.sharedGroups, 1);
  // b's socket holds 250 bytes already: room for one event of about 45 bytes
  b.res.writableLength = 250;
  r.runs[0]!.answer(batch(['e0', 'e1', 'e2']));
  await r.runsAsked(2);
  assert.deepEqual(
    events(b.res).map((e) => e.at?.index),
    [0],
    'what fits',
  );
  assert.equal(r.metrics.detached.value, 1);
  assert.equal(r.metrics.sharedGroups, 0);
  assert.deepEqual(r.runs[1]!.req.input, { q: 1 }, 'b re-runs the batch it was in');
  assert.equal(r.runs[1]!.req.runId, 'r2.1', 'as a group of its own');
  b.res.writableLength = 0;
  r.runs[1]!.answer(batch(['e0', 'e1', 'e2']));
  await settle();
  assert.deepEqual(
    events(b.res).map((e) => e.at?.index),
    [0, 1, 2, -1],
    'every entry once, in order',
  );
  assert.deepEqual(
    events(a.res).map((e) => e.at?.index),
    [0, 1, 2, -1],
  );
  assert.equal(r.metrics.entriesWritten.value, 3 + 1 + 2);
  assert.equal(r.metrics.memberPolls.value, 2);
});

test('an empty batch shared by two streams writes nothing and counts a poll for each', async () => {
  const r = rig();
  const a = r.open();
  await r.runsAsked(1);
  const b = r.open();
  await settle();
  r.runs[0]!.answer(batch([], { continue: true, next: 'n1' }));
  await settle();
  assert.equal(a.res.text, '');
  assert.equal(b.res.text, '');
  assert.equal(r.metrics.memberPolls.value, 2);
  assert.equal(r.metrics.sharedGroups, 1, 'still one group');
});

test('a group that ends leaves the lead of its feed to the group that took it over', async () => {
  const r = rig();
  const a = r.open();
  await r.runsAsked(1);
  r.runs[0]!.answer(batch([], { continue: true, next: 'n1' }));
  await settle();
  assert.equal(r.groups.leads.size, 1, 'a polls again in 60 s: the lead of the feed');
  // b's next poll is due before a's: b takes the lead over (the groups after it align to b)
  const b = r.open({ skip: 0, previous: 'p' });
  await r.runsAsked(2);
  r.runs[1]!.answer(batch([], { continue: true, next: 'n2', wait: 1000 }));
  await settle();
  a.member.stop();
  assert.equal(r.groups.leads.size, 1, "a's end does not remove b's lead");
  b.member.stop();
  assert.equal(r.groups.leads.size, 0);
});

test('before every poll after the first, each member is checked again: a refused one gets UNAUTHORIZED and goes', async () => {
  const r = rig();
  const checks: string[] = [];
  const a = r.open({ skip: 0 }, undefined, async () => {
    checks.push('a');
    return true;
  });
  await r.runsAsked(1);
  const b = r.open({ skip: 0 }, undefined, async () => {
    checks.push('b');
    return false;
  });
  const c = r.open({ skip: 0 }, undefined, async () => {
    checks.push('c');
    throw new Error('the key store is down');
  });
  await settle();
  assert.equal(r.metrics.sharedMembers, 3, 'three members share the first poll');
  assert.ok((r.runs[0]!.req.deadline ?? 0) > Date.now(), 'the run has its timeout ahead');
  r.runs[0]!.answer(batch(['e0'], { continue: true, next: 'n1', wait: 0 }));
  await r.runsAsked(2);
  assert.deepEqual(checks.sort(), ['a', 'b', 'c'], 'none was checked for the first poll; each before the second');
  for (const refused of [b, c]) {
    const got = events(refused.res);
    assert.deepEqual(
      got.map((e) => e.event ?? e.at?.index),
      [0, 'error'],
    );
    assert.equal(JSON.parse(got[1]!.data!).code, 'UNAUTHORIZED');
    assert.equal(refused.member.isClosed, true);
  }
  assert.equal(a.member.isClosed, false, 'a goes on');
  assert.equal(r.metrics.sharedMembers, 0);
  assert.deepEqual(r.runs[1]!.req.input, { q: 1, previous: 'n1' });
});

test('a member leaving a group of three keeps the others shared; a service that throws ends the stream with an error', async () => {
  const r = rig();
  const a = r.open();
  await r.runsAsked(1);
  r.open();
  const c = r.open();
  await settle();
  assert.equal(r.metrics.sharedGroups, 1);
  assert.equal(r.metrics.sharedMembers, 3);
  c.member.stop();
  assert.equal(r.metrics.sharedGroups, 1);
  assert.equal(r.metrics.sharedMembers, 2);
  r.runs[0]!.fail(new Error('the service broke'));
  await settle();
  const got = events(a.res);
  assert.deepEqual(
    got.map((e) => e.event),
    ['error'],
  );
  assert.equal(a.member.isClosed, true);
  assert.equal(r.metrics.streamGroups, 0);
  assert.equal(r.metrics.streamRuns, 0);
});

test('a response without a list is a batch of none: the stream ends with no entry', async () => {
  const r = rig();
  const a = r.open();
  await r.runsAsked(1);
  r.runs[0]!.answer({ outcome: 'SUCCESS', http: 200, response: { note: 'no list here' } });
  await settle();
  assert.deepEqual(
    events(a.res).map((e) => e.event ?? e.at?.index),
    ['end'],
  );
});
