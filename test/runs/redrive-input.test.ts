import { test } from 'node:test';
import assert from 'node:assert/strict';
import { config, handled, post, statusWhen, world } from './runs-world.js';

/**
 * A redrive's new `input` (docs/runs.md) replaces the saga's input; the saga's `inputSchema` is
 * "checked by the gateway before any step runs" (docs/sagas.md), but not on this door: an input
 * off the schema reaches the handlers. Open (a risk, not fixed here): the input a redrive takes is
 * the whole saga input, path parameters included, which the schema does not describe.
 */

const SQLITE = 'jr: { type: sqlite, file: ./journal.db }';

test(
  'a redrive input off the saga inputSchema is refused before any step runs again',
  { todo: 'redrive input is not checked against inputSchema (risk, reported)' },
  async (t) => {
    const cfg = config(SQLITE).replace(
      '        autoFail: true\n',
      '        autoFail: true\n        inputSchema: { type: object, required: [order], properties: { order: { type: string } } }\n',
    );
    const w = await world(cfg);
    t.after(() => w.close());
    const first = await post(w, '/api/request/orders', { order: 'o-1' });
    assert.equal(first.status, 503);
    assert.equal((await post(w, '/api/request/orders', { order: 5 })).status, 400, 'the gateway checks requests');
    handled().fixed = true;
    const res = await post(w, `/api/runs/${first.id}/redrive`, { fromStep: 'one', input: { order: 5 }, reason: 'x' });
    if (res.status === 202) await statusWhen(w, first.id, (s) => s.status === 'DONE');
    assert.ok(!handled().calls.some((c) => c.order === 5), 'a handler got an input the schema refuses');
    assert.equal(res.status, 400);
  },
);
