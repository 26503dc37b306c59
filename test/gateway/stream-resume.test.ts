import assert from 'node:assert/strict';
import { test } from 'node:test';
import { delay, feedService, ScriptedService, startGateway } from './harness.js';
import { collect, ns, range, type Got } from './sse-client.js';

/**
 * Resuming a stream with a cursor where it is easy to get wrong: inside the first batch while
 * another stream's first poll of the same feed is in flight (it must not join that poll, whose
 * batch starts at entry 0), and on another gateway replica (the cursor must verify there).
 */

const fast = { minWaitMs: 10, defaultWaitMs: 10 };

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`timed out waiting until ${what}`);
    await delay(5);
  }
}

/** The entries a stream got up to entry `n` (its first `n` entries), then closes it. */
async function firstEntries(url: string, n: number): Promise<Got> {
  const c = collect(url, undefined, (g) => g.entries.length === n);
  const got = await c.done;
  c.es.close();
  return got;
}

test('a resume inside the first batch does not join another stream’s first poll in flight', async () => {
  // 12 entries, 5 a poll. While `held`, polls of the first batch (no previous) wait for release.
  let held = false;
  let release!: () => void;
  let released = new Promise<void>((r) => (release = r));
  const inner = feedService(12, 5);
  const firstPolls = { waiting: 0 };
  const svc = new ScriptedService(async (req, runner) => {
    if (held && req.input['previous'] === undefined) {
      firstPolls.waiting++;
      await released;
    }
    return inner.run(runner, req);
  });
  const { gw, base, close } = await startGateway(svc, { stream: { ...fast, share: 'all' } });
  const url = `${base}/api/stream/feed`;
  let a: ReturnType<typeof collect> | undefined;
  let b: ReturnType<typeof collect> | undefined;
  try {
    const probe = await firstEntries(url, 5);
    const cursor = probe.entries[2]!.id; // after entry 2, inside the first batch (entries 0-4)
    await until(() => gw.stats().streams === 0, 'the probe is gone');

    held = true;
    released = new Promise<void>((r) => (release = r));
    a = collect(url);
    await until(() => firstPolls.waiting === 1, "A's first poll is in flight");
    b = collect(`${url}?lastEventId=${encodeURIComponent(cursor)}`);
    await until(() => gw.stats().streams === 2, 'B is connected');
    // B either polls the first batch itself (a second waiting poll) or joined A's: let both end.
    release();
    const [gotA, gotB] = await Promise.all([a.done, b.done]);
    assert.deepEqual(ns(gotA), range(0, 12), 'A: every entry once');
    assert.deepEqual(ns(gotB), range(3, 12), 'B: after its cursor, entries 0-2 not again');
    assert.ok(gotA.end && gotB.end);
    assert.equal(firstPolls.waiting, 2, 'B polled the first batch itself');
  } finally {
    release();
    a?.es.close();
    b?.es.close();
    await close();
  }
});

test('a cursor from one gateway replica resumes on another with the same cursorKey; another key refuses it', async () => {
  const key = 'replicas-share-this-cursor-key-0123';
  const stream = { ...fast, share: 'caller' as const, cursorKey: key };
  const one = await startGateway(feedService(12, 5), { stream });
  const two = await startGateway(feedService(12, 5), { stream });
  const other = await startGateway(feedService(12, 5), { stream: { ...stream, cursorKey: `${key}-other` } });
  try {
    const got = await firstEntries(`${one.base}/api/stream/feed`, 7);
    const cursor = got.entries[6]!.id; // inside the second batch (entries 5-9)
    // the load balancer sends the reconnect to the second replica
    const res = await fetch(`${two.base}/api/stream/feed`, {
      headers: { accept: 'text/event-stream', 'last-event-id': cursor },
    });
    assert.equal(res.status, 200, 'the second replica verifies the cursor');
    const text = await res.text(); // the stream ends after its last entry
    const entries = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as { n?: number });
    assert.deepEqual(
      entries.filter((e) => e.n !== undefined).map((e) => e.n),
      range(7, 12),
    );
    assert.match(text, /^event: end$/m);
    // a replica with another key cannot verify it: a 400, not entries from the start
    const refused = await fetch(`${other.base}/api/stream/feed`, {
      headers: { accept: 'text/event-stream', 'last-event-id': cursor },
    });
    assert.equal(refused.status, 400);
    await refused.body?.cancel();
  } finally {
    await Promise.all([one.close(), two.close(), other.close()]);
  }
});

test('a resume inside the first batch, alone: entries after the cursor only (the unshared path)', async () => {
  const { base, close } = await startGateway(feedService(8, 5), { stream: { ...fast, share: 'all' } });
  try {
    const got = await firstEntries(`${base}/api/stream/feed`, 3);
    const again = collect(`${base}/api/stream/feed?lastEventId=${encodeURIComponent(got.entries[1]!.id)}`);
    const resumed = await again.done;
    again.es.close();
    assert.deepEqual(ns(resumed), range(2, 8));
  } finally {
    await close();
  }
});
