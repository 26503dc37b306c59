import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import type { ShareScope } from '../../src/config/settings.js';
import { delay, ok, ScriptedService, startGateway } from './harness.js';
import type { GatewaySettingsInput } from './settings-for-test.js';
import { range } from './sse-client.js';

/**
 * The long-poll form of a stream (issue 25) over real sockets: every answer (batch, 204, end,
 * 400, 410), the headers that make it cacheable or not, and one run per position for many
 * requests.
 */

/** A live log: entries 0..length-1, `page` per poll from `previous`; `wait` ms once caught up; ends when `closed`. */
class LiveLog {
  length = 0;
  closed = false;
  readonly svc: ScriptedService;
  constructor(page: number, wait: number, extra: (from: number) => Record<string, unknown> = () => ({})) {
    this.svc = new ScriptedService((req) => {
      const from = typeof req.input['previous'] === 'number' ? req.input['previous'] : 0;
      const to = Math.min(this.length, from + page);
      const list = range(from, to).map((n) => ({ n }));
      const more = to < this.length;
      return ok({ list, next: to, continue: more || !this.closed, wait: more ? 0 : wait, ...extra(from) });
    });
  }
}

interface Got {
  status: number;
  headers: Headers;
  body: { list: Array<{ n: number }>; offset: string; end: boolean } | undefined;
  ms: number;
}

async function get(url: string, init?: RequestInit): Promise<Got> {
  const t0 = Date.now();
  const res = await fetch(url, init);
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text !== '' && res.status === 200 ? JSON.parse(text) : text !== '' ? JSON.parse(text) : undefined,
    ms: Date.now() - t0,
  };
}

function lp(base: string, offset?: string, cursor?: string, path = 'feed'): string {
  const q = new URLSearchParams({ live: 'long-poll' });
  if (offset !== undefined) q.set('offset', offset);
  if (cursor !== undefined) q.set('cursor', cursor);
  return `${base}/api/stream/${path}?${q}`;
}

const publicAll: GatewaySettingsInput = {
  apis: [{ path: '/', runner: 'main', roles: [], public: true, stream: { share: 'all' } }],
  stream: { minWaitMs: 10, maxPerClient: 1000, longPoll: { holdMs: 5000, maxAge: 3, staleWhileRevalidate: 7 } },
};

test('long-poll: a batch, the next batch, a 204 after the wait with the same offset, a cursor that only grows', async () => {
  const log = new LiveLog(3, 300);
  log.length = 5;
  const { base, close } = await startGateway(log.svc, publicAll);
  try {
    const a = await get(lp(base));
    assert.equal(a.status, 200);
    assert.deepEqual(a.body!.list, [{ n: 0 }, { n: 1 }, { n: 2 }]);
    assert.equal(a.body!.end, false);
    assert.equal(a.headers.get('stream-next-offset'), a.body!.offset);
    assert.equal(a.headers.get('cache-control'), 'public, max-age=3, stale-while-revalidate=7');
    assert.match(a.headers.get('etag')!, /^"[A-Za-z0-9_-]{27}"$/);
    assert.equal(a.headers.get('vary'), null, 'share: all varies by nothing but the URL');
    assert.match(a.headers.get('content-type')!, /^application\/json/);

    const b = await get(lp(base, a.body!.offset));
    assert.deepEqual(b.body!.list, [{ n: 3 }, { n: 4 }]);
    // caught up: nothing new is held for the feed's wait (300 ms), then 204 with the same offset
    const c = await get(lp(base, b.body!.offset));
    assert.equal(c.status, 204);
    assert.ok(c.ms >= 250, `held ${c.ms} ms`);
    assert.equal(c.headers.get('stream-next-offset'), b.body!.offset);
    const cursor = c.headers.get('stream-cursor')!;
    assert.match(cursor, /^[0-9]+$/);
    assert.equal(c.headers.get('cache-control'), 'public, max-age=3, stale-while-revalidate=7');
    assert.ok(c.headers.get('etag'));
    // a cursor from the future (another replica's clock) still moves forward
    const far = String(Number(cursor) + 1_000_000);
    const d = await get(lp(base, b.body!.offset, far));
    assert.equal(d.status, 204);
    assert.equal(d.headers.get('stream-cursor'), String(Number(far) + 1));
    // an entry arrives: the request at the offset gets it
    log.length = 6;
    await delay(320);
    const e = await get(lp(base, b.body!.offset, cursor));
    assert.equal(e.status, 200);
    assert.deepEqual(e.body!.list, [{ n: 5 }]);
    // If-None-Match of the same answer: 304
    const f = await get(lp(base, b.body!.offset, cursor), { headers: { 'if-none-match': e.headers.get('etag')! } });
    assert.equal(f.status, 304);
  } finally {
    await close();
  }
});

test('long-poll: a finished feed says so, and its final offset answers the same without a run', async () => {
  const log = new LiveLog(10, 50);
  log.length = 2;
  log.closed = true;
  const { base, close } = await startGateway(log.svc, publicAll);
  try {
    const a = await get(lp(base));
    assert.deepEqual(a.body, { list: [{ n: 0 }, { n: 1 }], offset: a.body!.offset, end: true });
    assert.equal(a.headers.get('stream-closed'), 'true');
    assert.match(a.body!.offset, /\.e\./);
    const runs = log.svc.calls.length;
    const b = await get(lp(base, a.body!.offset));
    assert.equal(b.status, 200);
    assert.deepEqual(b.body, { list: [], offset: a.body!.offset, end: true });
    assert.equal(b.headers.get('stream-closed'), 'true');
    assert.equal(log.svc.calls.length, runs, 'no saga run for a finished feed');
  } finally {
    await close();
  }
});

test('long-poll: forged, foreign and malformed offsets and cursors are 400 INVALID_CURSOR; a gone position 410', async () => {
  const svc = new ScriptedService((req) => {
    if (req.input['previous'] === 'old')
      return { outcome: 'FAIL', http: 410, error: { code: 'OFFSET_GONE', message: 'gone', http: 410 } };
    return ok({ list: [{ n: 1 }], next: req.path === '/feed' ? 'old' : 'x', continue: true, wait: 50 });
  });
  const { base, close } = await startGateway(svc, publicAll);
  try {
    const a = await get(lp(base));
    const offset = a.body!.offset;
    for (const bad of [
      offset.slice(0, -2) + (offset.endsWith('AA') ? 'BB' : 'AA'),
      'e30.0.AAAAAAAAAAAAAAAAAAAAAA',
      'nonsense',
      'a.b.c.d',
    ]) {
      const r = await get(lp(base, bad));
      assert.equal(r.status, 400, bad.slice(0, 40));
      assert.equal((r.body as unknown as { code: string }).code, 'INVALID_CURSOR');
      assert.equal(r.headers.get('cache-control'), 'private, no-store');
    }
    const other = await get(lp(base, offset, undefined, 'other'));
    assert.equal(other.status, 400, 'an offset of another path');
    for (const cursor of ['-1', '1.5', 'abc', '9'.repeat(16)]) {
      const r = await get(lp(base, undefined, cursor));
      assert.equal(r.status, 400, `cursor ${cursor}`);
    }
    // the saga says the position is gone (it fails with 410): so does the answer
    const gone = await get(lp(base, offset));
    assert.equal(gone.status, 410);
    assert.equal((gone.body as unknown as { code: string }).code, 'OFFSET_GONE');
    assert.equal(gone.headers.get('cache-control'), 'private, no-store');
  } finally {
    await close();
  }
});

const SECRET = 'a-secret-of-at-least-32-bytes-for-hs256!';
function token(sub: string): Promise<string> {
  return new SignJWT({ roles: ['user'] })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + 600)
    .sign(new TextEncoder().encode(SECRET));
}
const jwt = {
  secret: SECRET,
  algorithms: ['HS256'],
  rolesClaim: 'roles',
  principalClaim: 'sub',
  clockToleranceMs: 0,
};

test('long-poll: who may share an answer decides the headers; a private offset is bound to its caller', async () => {
  const svc = new ScriptedService((req) => ok({ list: [{ who: req.user?.sub ?? null }], next: 1, continue: true }));
  const cases: Array<{ share: ShareScope; public: boolean; auth: boolean; cc: string; vary: string | null }> = [
    { share: 'all', public: true, auth: false, cc: 'public', vary: null },
    { share: 'all', public: true, auth: true, cc: 'public', vary: null },
    { share: 'caller', public: true, auth: false, cc: 'public', vary: 'Authorization, Cookie' },
    { share: 'caller', public: true, auth: true, cc: 'private, no-store', vary: null },
    { share: 'off', public: true, auth: false, cc: 'private, no-store', vary: null },
    { share: 'all', public: false, auth: true, cc: 'private, no-store', vary: null },
    { share: 'caller', public: false, auth: true, cc: 'private, no-store', vary: null },
  ];
  for (const k of cases) {
    const { base, close } = await startGateway(svc, {
      auth: { jwt },
      apis: [
        { path: '/', runner: 'main', roles: k.public ? [] : ['user'], public: k.public, stream: { share: k.share } },
      ],
      stream: { minWaitMs: 10 },
    });
    try {
      const headers: Record<string, string> = k.auth ? { authorization: `Bearer ${await token('ann')}` } : {};
      const r = await get(lp(base), { headers });
      assert.equal(r.status, 200, JSON.stringify(k));
      assert.ok(
        r.headers.get('cache-control')!.startsWith(k.cc),
        `${JSON.stringify(k)}: ${r.headers.get('cache-control')}`,
      );
      assert.equal(r.headers.get('vary'), k.vary, JSON.stringify(k));
      if (k.share === 'caller' && k.auth) {
        // ann's offset is hers: bob presenting it is refused
        const bob = await get(lp(base, r.body!.offset), { headers: { authorization: `Bearer ${await token('bob')}` } });
        assert.equal(bob.status, 400, "another caller's offset");
        assert.deepEqual(r.body!.list, [{ who: 'ann' }]);
      }
    } finally {
      await close();
    }
  }
});

test('long-poll: 200 requests at one position, one saga run per position and wait; a next that repeats never loops', async () => {
  // an answer stands for the feed's wait: 6 s, long enough for 200 requests on a loaded machine
  const log = new LiveLog(100, 6000, (from) => (from >= 3 ? { next: from } : {}));
  log.length = 3;
  const { base, close } = await startGateway(log.svc, {
    ...publicAll,
    stream: { ...publicAll.stream, longPoll: { holdMs: 500, maxAge: 1, staleWhileRevalidate: 1 } },
  });
  try {
    // waits end on a clock shared by every position (multiples of `wait`, long-poll.ts nextTick):
    // start just after a tick, so that this first position's wait is a whole one
    await delay(6000 - (Date.now() % 6000) + 50);
    const first = await Promise.all(range(0, 200).map(() => get(lp(base))));
    const t0 = Date.now(); // after the poll, so after the moment its wait is counted from
    assert.equal(log.svc.calls.length, 1, 'one run for 200 requests at the first position');
    const offsets = new Set(first.map((r) => r.body!.offset));
    assert.equal(offsets.size, 1, 'one next offset for everyone');
    const [offset] = offsets;
    // the next position is not polled before the feed's wait is over: held (up to hold), 204
    log.length = 5;
    const early = await Promise.all(range(0, 200).map(() => get(lp(base, offset))));
    assert.equal(log.svc.calls.length, 1, 'no run before the wait is over');
    for (const r of early) assert.equal(r.status, 204);
    const cursors = new Set(early.map((r) => r.headers.get('stream-cursor')));
    assert.equal(cursors.size, 1, 'one cursor for everyone');
    const [cursor] = cursors;
    await delay(6100 - (Date.now() - t0));
    // the saga now answers `next` = its own `previous` (3): the offset still moves past the entries
    const second = await Promise.all(range(0, 200).map(() => get(lp(base, offset, cursor!))));
    assert.equal(log.svc.calls.length, 2, 'one run once the wait is over');
    for (const r of second) assert.deepEqual(r.body!.list, [{ n: 3 }, { n: 4 }]);
    const after = second[0]!.body!.offset;
    assert.notEqual(after, offset);
    const third = await get(lp(base, after));
    assert.equal(third.status, 204, 'nothing after 4: held (up to longPoll.hold), then 204');
    assert.ok(third.ms >= 450 && third.ms < 5000, `held ${third.ms} ms`);
    assert.equal(third.headers.get('stream-next-offset'), after, 'the same offset, not back');
  } finally {
    await close();
  }
});

test('long-poll: over maxPerClient held requests is 429; the held ones end when the gateway closes', async () => {
  const svc = new ScriptedService(() => ok({ list: [], continue: true, wait: 60_000 }));
  const { base, close } = await startGateway(svc, {
    ...publicAll,
    stream: { ...publicAll.stream, maxPerClient: 2, longPoll: { holdMs: 60_000, maxAge: 1, staleWhileRevalidate: 1 } },
  });
  const held = [get(lp(base)), get(lp(base))];
  await delay(200);
  const third = await get(lp(base));
  assert.equal(third.status, 429);
  assert.equal(third.headers.get('retry-after'), '5');
  const t0 = Date.now();
  await close();
  const answers = await Promise.all(held);
  for (const a of answers) assert.equal(a.status, 204);
  assert.ok(Date.now() - t0 < 5000, 'answered when the gateway closed');
});

test('long-poll: a feed nobody follows any more is not polled again', async () => {
  const log = new LiveLog(10, 100);
  log.length = 2;
  const { base, close } = await startGateway(log.svc, publicAll);
  try {
    const a = await get(lp(base));
    assert.equal(a.status, 200);
    // the next position would be polled once the wait (100 ms) is over, but nobody asks for it
    await delay(600);
    assert.equal(log.svc.calls.length, 1, 'no run for a position nobody asked for');
    // someone asks: it is polled, and a request during the wait gets that poll's answer
    log.length = 3;
    const b = await get(lp(base, a.body!.offset));
    assert.deepEqual(b.body!.list, [{ n: 2 }]);
    log.length = 4;
    const c = await get(lp(base, b.body!.offset));
    assert.equal(c.status, 200, 'held until the wait was over, then the batch (no 204 in between)');
    assert.deepEqual(c.body!.list, [{ n: 3 }]);
    assert.equal(log.svc.calls.length, 3);
  } finally {
    await close();
  }
});
