import { test } from 'node:test';
import assert from 'node:assert/strict';
import { config, post, world } from './runs-world.js';

/**
 * Step and saga ids are any name of 1 to 128 characters (saga/schema.ts NameOf): the run routes
 * take every one of them (`fromStep`, `?saga=`), not only those of a narrower alphabet.
 */

const SQLITE = 'jr: { type: sqlite, file: ./journal.db }';

test('a step or saga id with a space or a letter beyond ASCII can be named by fromStep and ?saga=', async (t) => {
  const cfg = config(SQLITE)
    .replace('- id: order', '- id: "order ö"')
    .replace('- id: one\n', '- id: "Step one"\n')
    .replace('links: [{ to: one }]', 'links: [{ to: "Step one" }]');
  const w = await world(cfg);
  t.after(() => w.close());
  const first = await post(w, '/api/request/orders', { order: 'o-1' });
  assert.equal(first.status, 503);
  const dry = await post(w, `/api/runs/${first.id}/redrive`, { fromStep: 'Step one', dryRun: true });
  assert.equal(dry.status, 200, JSON.stringify(dry.body));
  assert.equal(dry.body['fromStep'], 'Step one');
  const listed = await fetch(`${w.base}/api/runs?saga=${encodeURIComponent('order ö')}`);
  assert.equal(listed.status, 200, await listed.clone().text());
  const body = (await listed.json()) as { runs: { runId: string }[] };
  assert.deepEqual(
    body.runs.map((r) => r.runId),
    [first.id],
  );
});
