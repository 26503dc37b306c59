import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { SignJWT } from 'jose';
import type { ShareScope } from '../../src/config/settings.js';
import type { SagaRequest } from '../../src/core/types.js';
import type { Gateway } from '../../src/gateway/server.js';
import { delay, ok, ScriptedService, startGateway } from './harness.js';
import type { GatewaySettingsInput } from './settings-for-test.js';
import { collect, ns, range, type Got } from './sse-client.js';

/**
 * Shared stream polls (issue 11) over real sockets: streams whose next poll is the same saga run
 * share it, and each still sees every entry exactly once and in order.
 */

const fast = { minWaitMs: 10, defaultWaitMs: 10 };

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!cond() && Date.now() - t0 < ms) await delay(10);
  assert.ok(cond(), 'timed out waiting');
}

/** A metric as `/metrics` shows it. */
async function metric(gw: Gateway, name: string): Promise<number> {
  const address = gw.app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
}

/**
 * A live log, like a changes feed: entries `0..log.length-1`; a poll returns at most `page`
 * entries from `previous` (0 when absent), `next` = the index after them, `wait` 0 while there is
 * a backlog and `idle` ms once caught up, `continue` until `closed` is set and everything was
 * sent. Counts the runs that returned entries, by `previous`.
 */
class LiveLog {
  length = 0;
  closed = false;
  /** runs that returned entries, by previous */
  readonly runs = new Map<number, number>();
  readonly svc: ScriptedService;
  constructor(page: number, idle: number) {
    this.svc = new ScriptedService((req) => {
      const from = typeof req.input['previous'] === 'number' ? req.input['previous'] : 0;
      const to = Math.min(this.length, from + page);
      const list = range(from, to).map((n) => ({ n }));
      if (list.length > 0) this.runs.set(from, (this.runs.get(from) ?? 0) + 1);
      const more = to < this.length;
      return ok({ list, next: to, continue: more || !this.closed, wait: more ? 0 : idle });
    });
  }
}

test('N clients on one feed: every entry once and in order, one saga run per poll', async () => {
  const log = new LiveLog(5, 40);
  const { gw, base, close } = await startGateway(log.svc, { stream: { ...fast, share: 'all', maxPerClient: 100 } });
  const clients: Array<ReturnType<typeof collect>> = [];
  try {
    for (let i = 0; i < 20; i++) clients.push(collect(base + '/api/stream/feed?topic=a'));
    // every client polled once by itself (or joined a first poll in flight), then they all met
    await until(() => gw.metrics.sharedMembers === 20);
    assert.equal(gw.metrics.streamGroups, 1, 'one poll group');
    for (let k = 0; k < 6; k++) {
      log.length += 7;
      await delay(30);
    }
    log.closed = true;
    const all = await Promise.all(clients.map((c) => c.done));
    for (const got of all) {
      assert.deepEqual(ns(got), range(0, 42), 'every entry once, in order');
      assert.ok(got.end, 'and the end');
    }
    for (const [previous, n] of log.runs) assert.equal(n, 1, `the batch after ${previous} was made by one run`);
    assert.equal(await metric(gw, 'sagaway_stream_entries_encoded_total'), 42);
    assert.equal(await metric(gw, 'sagaway_stream_entries_written_total'), 42 * 20);
    const runs = await metric(gw, 'sagaway_stream_polls_total');
    const served = await metric(gw, 'sagaway_stream_member_polls_total');
    assert.ok(runs * 5 < served, `saga runs per stream poll: ${runs} / ${served}`);
  } finally {
    for (const c of clients) c.es.close();
    await close();
  }
});

test('a late joiner with an old cursor catches up alone, then joins the live group', async () => {
  const log = new LiveLog(3, 30);
  log.length = 10;
  const { gw, base, close } = await startGateway(log.svc, { stream: { ...fast, share: 'all' } });
  let b: ReturnType<typeof collect> | undefined;
  const a = collect(base + '/api/stream/feed');
  try {
    // A is live: it has caught up with the log and polls `previous = 10` every 30 ms.
    let seen: Got | undefined;
    const probe = collect(base + '/api/stream/feed', undefined, (g) => g.entries.length === 10 && !!(seen = g));
    await probe.done;
    probe.es.close();
    await until(() => gw.metrics.sharedMembers === 0 && gw.stats().streams === 1);
    const before = new Map(log.runs);
    // B resumes after entry 4 (inside the batch that previous = 3 made): it polls 3, 6, 9 alone...
    b = collect(`${base}/api/stream/feed?lastEventId=${encodeURIComponent(seen!.entries[4]!.id)}`);
    // ...and then its previous is the live group's: it joins it.
    await until(() => gw.metrics.sharedMembers === 2);
    for (const p of [3, 6, 9]) assert.equal(log.runs.get(p)! - before.get(p)!, 1, `B's own catch-up poll of ${p}`);
    for (let k = 0; k < 4; k++) {
      log.length += 4;
      await delay(40);
    }
    log.closed = true;
    const [gotA, gotB] = await Promise.all([a.done, b.done]);
    assert.deepEqual(ns(gotA), range(0, 26));
    assert.deepEqual(ns(gotB), range(5, 26), 'B: after its cursor, nothing lost or repeated');
    for (const [previous, n] of log.runs)
      if (previous >= 10) assert.equal(n, 1, `after joining: one run for ${previous}`);
  } finally {
    a.es.close();
    b?.es.close();
    await close();
  }
});

test('a stalled member is detached and closed; the others keep their pace and get everything', async () => {
  const entry = 'x'.repeat(60 * 1024);
  let go = false;
  let last = Infinity;
  const box: { gw?: Gateway } = {};
  const svc = new ScriptedService((req) => {
    const previous = req.input['previous'];
    // Until `go`, an empty feed: the three streams meet in one group waiting on previous = 0.
    if (!go) return ok({ list: [], next: 0, continue: true, wait: 5 });
    const from = typeof previous === 'number' ? previous : 0;
    // Then 240 KB per poll until the stalled member was detached, and 20 polls more.
    if (last === Infinity && box.gw!.metrics.detached.value > 0) last = from + 20 * 4;
    const list = range(from, from + 4).map((n) => ({ n, entry }));
    return ok({ list, next: from + 4, continue: from + 4 < last, wait: 5 });
  });
  const started = await startGateway(svc, {
    stream: { minWaitMs: 5, maxBuffered: 256 * 1024, stallTimeoutMs: 1000, share: 'all' },
  });
  const { gw, base, close } = started;
  box.gw = gw;
  const port = Number(new URL(base).port);
  const stalled: Socket = connect(port, '127.0.0.1');
  stalled.on('error', () => {});
  const readers: Array<ReturnType<typeof collect>> = [];
  try {
    await new Promise((r) => stalled.once('connect', r));
    stalled.write('GET /api/stream/feed HTTP/1.1\r\nHost: x\r\n\r\n');
    stalled.pause(); // reads nothing: the kernel buffers fill, then its response buffer
    for (let i = 0; i < 2; i++) readers.push(collect(base + '/api/stream/feed'));
    await until(() => gw.metrics.sharedMembers === 3);
    go = true;
    const t0 = Date.now();
    const got = await Promise.all(readers.map((r) => r.done));
    const seconds = (Date.now() - t0) / 1000;
    assert.ok(Number.isFinite(last), 'the stalled member was detached');
    assert.ok((await metric(gw, 'sagaway_stream_detached_total')) >= 1);
    for (const g of got) {
      assert.deepEqual(ns(g), range(0, last), 'the readers got every entry once, in order');
      assert.ok(g.end);
    }
    // Detached, the stalled member waited for its socket alone (it polled nothing more) and was
    // closed after stallTimeout, with no timer left.
    await until(() => gw.stats().streams === 0, 5000);
    assert.equal(gw.stats().timers, 0);
    assert.ok(seconds < 20, `the readers finished in ${seconds} s`);
  } finally {
    stalled.destroy();
    for (const r of readers) r.es.close();
    await close();
  }
});

const SECRET = 'a-secret-of-at-least-32-bytes-for-hs256!';
const now = () => Math.floor(Date.now() / 1000);
function token(sub: string, exp: number, roles = ['user']): Promise<string> {
  return new SignJWT({ roles })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(exp)
    .sign(new TextEncoder().encode(SECRET));
}
const withToken = (t: string) => ({
  fetch: (u: string | URL, i?: RequestInit) =>
    fetch(u, { ...i, headers: { ...(i?.headers as Record<string, string>), authorization: `Bearer ${t}` } }),
});
function jwtGateway(svc: ScriptedService, share: ShareScope, extra: GatewaySettingsInput['stream'] = {}) {
  return startGateway(svc, {
    auth: {
      jwt: {
        secret: SECRET,
        algorithms: ['HS256'],
        rolesClaim: 'roles',
        principalClaim: 'sub',
        clockToleranceMs: 0,
      },
    },
    apis: [{ path: '/', runner: 'main', roles: ['user'], public: false, stream: { share } }],
    stream: { ...fast, ...extra },
  });
}

test('share all: the saga runs with no user; a member whose token expires gets UNAUTHORIZED, the others go on', async () => {
  const users: Array<SagaRequest['user']> = [];
  let n = 0;
  const svc = new ScriptedService((req) => {
    users.push(req.user);
    const from = typeof req.input['previous'] === 'number' ? req.input['previous'] : 0;
    n = Math.max(n, from);
    return ok({ list: [{ n: from }], next: from + 1, continue: from < 40, wait: 100 });
  });
  const { gw, base, close } = await jwtGateway(svc, 'all');
  const soon = collect(base + '/api/stream/feed', withToken(await token('alice', now() + 2)));
  const later = collect(base + '/api/stream/feed', withToken(await token('bob', now() + 600)));
  try {
    const gotSoon = await soon.done;
    assert.deepEqual(gotSoon.errors, [
      {
        type: 'https://sagaway.dev/errors/UNAUTHORIZED',
        title: 'Unauthorized',
        status: 401,
        code: 'UNAUTHORIZED',
        detail: 'Unauthorized',
        requestId: (gotSoon.errors[0] as { requestId: string }).requestId,
      },
    ]);
    const cut = ns(gotSoon).length;
    assert.ok(cut >= 1, `alice got ${cut} entries before her token expired`);
    const gotLater = await later.done;
    assert.deepEqual(ns(gotLater), range(0, 41), 'bob got every entry, before and after alice left');
    assert.ok(
      users.every((u) => u === null),
      'every run had no user',
    );
    assert.ok(gw.metrics.sharedMembers === 0);
  } finally {
    soon.es.close();
    later.es.close();
    await close();
  }
});

test('share caller: streams of one principal share a run; two principals never mix', async () => {
  const keys = ['key-one', 'key-two'].map((k) => ({
    name: k,
    sha256: createHash('sha256').update(k).digest('hex'),
    roles: ['user'],
  }));
  const runsBy = new Map<string, number>();
  const svc = new ScriptedService((req) => {
    const who = req.user?.sub ?? 'nobody';
    runsBy.set(who, (runsBy.get(who) ?? 0) + 1);
    const from = typeof req.input['previous'] === 'number' ? req.input['previous'] : 0;
    return ok({ list: [{ n: from, for: who }], next: from + 1, continue: from < 15, wait: 30 });
  });
  const { gw, base, close } = await startGateway(svc, {
    auth: { apiKeys: keys },
    apis: [{ path: '/', runner: 'main', roles: ['user'], public: false }],
    stream: { ...fast, share: 'caller' },
  });
  const as = (key: string) => ({
    fetch: (u: string | URL, i?: RequestInit) =>
      fetch(u, { ...i, headers: { ...(i?.headers as Record<string, string>), 'x-api-key': key } }),
  });
  const streams = [as('key-one'), as('key-one'), as('key-two')].map((init) => collect(base + '/api/stream/feed', init));
  try {
    await until(() => gw.metrics.sharedMembers === 2);
    const [one, oneAgain, two] = await Promise.all(streams.map((s) => s.done));
    for (const [got, who] of [
      [one!, 'apikey:key-one'],
      [oneAgain!, 'apikey:key-one'],
      [two!, 'apikey:key-two'],
    ] as const) {
      assert.deepEqual(ns(got), range(0, 16));
      assert.ok(
        got.entries.every((e) => (e.data as { for: string }).for === who),
        `${who} only saw its own runs`,
      );
    }
    // key-one's two streams: at most their own first polls apart, then one run per poll.
    assert.ok(runsBy.get('apikey:key-one')! <= 16 + 1, `key-one runs: ${runsBy.get('apikey:key-one')}`);
    assert.equal(runsBy.get('apikey:key-two'), 16);
    // A token of one caller is no good to the other, also on a shared feed.
    const res = await fetch(`${base}/api/stream/feed?lastEventId=${encodeURIComponent(one!.entries[3]!.id)}`, {
      headers: { 'x-api-key': 'key-two' },
    });
    assert.equal(res.status, 400);
  } finally {
    for (const s of streams) s.es.close();
    await close();
  }
});

test('cursor tokens are bound to the share scope: a token of one scope is 400 INVALID_CURSOR in another', async () => {
  const svc = new ScriptedService((req) => {
    const from = typeof req.input['previous'] === 'number' ? req.input['previous'] : 0;
    return ok({ list: [{ n: from }, { n: from + 1 }], next: from + 2, continue: from < 4, wait: 0 });
  });
  const cursorKey = 'the-same-cursor-key-for-both';
  const gws = {
    all: await jwtGateway(svc, 'all', { cursorKey }),
    caller: await jwtGateway(svc, 'caller', { cursorKey }),
  };
  const alice = await token('alice', now() + 600);
  const bob = await token('bob', now() + 600);
  const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
  try {
    const ids: Record<string, string> = {};
    for (const scope of ['all', 'caller'] as const) {
      const text = await (await fetch(gws[scope].base + '/api/stream/feed', { headers: bearer(alice) })).text();
      ids[scope] = /^id: (.+)$/m.exec(text)![1]!;
    }
    const resume = async (scope: 'all' | 'caller', id: string, t: string) => {
      const res = await fetch(`${gws[scope].base}/api/stream/feed?lastEventId=${encodeURIComponent(id)}`, {
        headers: bearer(t),
      });
      return { status: res.status, text: await res.text() };
    };
    // In its own scope a token resumes: for `all`, whoever presents it (the scope is the API).
    assert.equal((await resume('all', ids['all']!, bob)).status, 200);
    assert.equal((await resume('caller', ids['caller']!, alice)).status, 200);
    // Anywhere else it is refused.
    for (const [scope, id, t] of [
      ['caller', ids['all']!, alice],
      ['all', ids['caller']!, alice],
      ['caller', ids['caller']!, bob],
    ] as const) {
      const r = await resume(scope, id, t);
      assert.equal(r.status, 400, `${scope}`);
      assert.equal((JSON.parse(r.text) as { code: string }).code, 'INVALID_CURSOR');
    }
  } finally {
    await gws.all.close();
    await gws.caller.close();
  }
});

test('share off: every stream polls alone, as before', async () => {
  const log = new LiveLog(5, 20);
  log.length = 10;
  log.closed = true;
  const { gw, base, close } = await startGateway(log.svc, { stream: { ...fast, share: 'off' } });
  const clients = [0, 1, 2].map(() => collect(base + '/api/stream/feed'));
  try {
    for (const got of await Promise.all(clients.map((c) => c.done))) assert.deepEqual(ns(got), range(0, 10));
    assert.deepEqual([...log.runs.values()], [3, 3]);
    assert.equal(await metric(gw, 'sagaway_stream_detached_total'), 0);
  } finally {
    for (const c of clients) c.es.close();
    await close();
  }
});

test('streams that joined a changes feed at different moments get in phase and then share its polls', async () => {
  // A changes feed: `next` is "up to now", so two polls share a key only when made together.
  const t0 = Date.now();
  const seq = () => Math.floor((Date.now() - t0) / 10);
  const svc = new ScriptedService((req) => {
    const from = typeof req.input['previous'] === 'number' ? req.input['previous'] : seq();
    const to = seq();
    return ok({ list: range(from, to).map((n) => ({ n })), next: to, continue: true, wait: 150 });
  });
  const { gw, base, close } = await startGateway(svc, { stream: { ...fast, share: 'all' } });
  const clients: Array<ReturnType<typeof collect>> = [];
  try {
    for (let i = 0; i < 4; i++) {
      clients.push(collect(base + '/api/stream/changes', undefined, (g) => g.entries.length >= 80));
      await delay(45);
    }
    await until(() => gw.metrics.sharedMembers === 4, 5000);
    // Counted in polls, not in time: while the four share, each saga run serves all four streams.
    const runs = svc.calls.length;
    const served = gw.metrics.memberPolls.value;
    await until(() => gw.metrics.memberPolls.value >= served + 20, 10_000);
    const made = svc.calls.length - runs;
    const delivered = gw.metrics.memberPolls.value - served;
    assert.ok(
      made >= 1 && made * 4 <= delivered + 4,
      `one run for the four streams: ${made} runs, ${delivered} deliveries`,
    );
    for (const got of await Promise.all(clients.map((c) => c.done))) {
      const n = ns(got).slice(0, 80);
      assert.deepEqual(n, range(n[0]!, n[0]! + 80), 'no entry lost or repeated across the merges');
    }
  } finally {
    for (const c of clients) c.es.close();
    await close();
  }
});

test('a batch larger than maxBuffered: each member gets what fits, goes on alone from there, loses nothing', async () => {
  const entry = 'y'.repeat(60 * 1024);
  let go = false;
  const svc = new ScriptedService((req) => {
    if (!go) return ok({ list: [], next: 0, continue: true, wait: 5 });
    const from = typeof req.input['previous'] === 'number' ? req.input['previous'] : 0;
    // 4 entries of 60 KB per poll against 100 KB of maxBuffered: a member takes at most one of
    // a shared batch at a time, so every shared batch detaches its members mid-batch.
    const list = range(from, Math.min(from + 4, 24)).map((n) => ({ n, entry }));
    return ok({ list, next: from + list.length, continue: from + list.length < 24, wait: 5 });
  });
  const { gw, base, close } = await startGateway(svc, {
    stream: { minWaitMs: 5, maxBuffered: 100 * 1024, share: 'all' },
  });
  const readers = [0, 1, 2].map(() => collect(base + '/api/stream/feed'));
  try {
    await until(() => gw.metrics.sharedMembers === 3);
    go = true;
    for (const got of await Promise.all(readers.map((r) => r.done))) {
      assert.deepEqual(ns(got), range(0, 24), 'every entry once, in order');
      assert.ok(got.end);
    }
    assert.ok((await metric(gw, 'sagaway_stream_detached_total')) >= 3, 'detached mid-batch');
  } finally {
    for (const r of readers) r.es.close();
    await close();
  }
});
