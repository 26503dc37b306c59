import assert from 'node:assert/strict';
import { handled, post, statusWhen, world, type World } from './runs-world.js';

/**
 * The redrive of issue 22 on a journal: a run fails at its flaky step; the cause is fixed (the
 * flag); a dry run lists the steps that would run again and flags the one not declared
 * idempotent; the redrive (same run id, redriveCount 1) runs only the failed step and those
 * after it; two redrives at once: one is ALREADY_REDRIVEN. Shared by the SQLite and PostgreSQL
 * tests.
 */
export async function redriveFromTheFailedStep(cfg: string): Promise<void> {
  const w: World = await world(cfg);
  try {
    const h = handled();
    const first = await post(w, '/api/request/orders', { order: 'o-1' });
    assert.equal(first.status, 503);
    assert.equal(first.body['code'], 'FLAKY');
    const runId = first.id;
    assert.deepEqual(
      h.calls.map((c) => c.name),
      ['Reserve', 'Flaky'],
    );
    const listed = (await (await fetch(`${w.base}/api/runs?status=DONE`)).json()) as {
      runs: Record<string, unknown>[];
    };
    assert.equal(listed.runs[0]!['runId'], runId);
    assert.equal(listed.runs[0]!['failedStep'], 'two');

    // a dry run changes nothing
    const dry = await post(w, `/api/runs/${runId}/redrive`, { fromStep: 'failed', dryRun: true });
    assert.equal(dry.status, 200);
    assert.equal(dry.body['fromStep'], 'two');
    assert.deepEqual(
      (dry.body['steps'] as { id: string }[]).map((s) => s.id),
      ['two', 'three'],
    );
    assert.deepEqual(dry.body['notIdempotent'], ['two']);
    assert.equal(dry.body['redriveCount'], 0);
    assert.equal(h.calls.length, 2);

    // refusals before the redrive: no reason, a step that is not there, an unknown run
    assert.equal(
      (await post(w, `/api/runs/${runId}/redrive`, { fromStep: 'failed' })).body['code'],
      'VALIDATION_FAILED',
    );
    assert.equal(
      (await post(w, `/api/runs/${runId}/redrive`, { fromStep: 'nope', reason: 'x' })).body['code'],
      'VALIDATION_FAILED',
    );
    assert.equal((await post(w, `/api/runs/no-such-run/redrive`, { reason: 'x' })).body['code'], 'RUN_NOT_FOUND');

    // fixed; two redrives at once: one wins
    h.fixed = true;
    h.slow = 300; // the winner is still running when the second one is decided
    const both = await Promise.all([
      post(w, `/api/runs/${runId}/redrive`, { fromStep: 'failed', reason: 'payments fixed' }),
      post(w, `/api/runs/${runId}/redrive`, { fromStep: 'failed', reason: 'payments fixed' }),
    ]);
    const codes = both.map((r) => r.status).sort();
    assert.deepEqual(codes, [202, 409], JSON.stringify(both.map((r) => r.body)));
    const lost = both.find((r) => r.status === 409)!;
    assert.equal(lost.body['code'], 'ALREADY_REDRIVEN');
    assert.equal(both.find((r) => r.status === 202)!.body['redriveCount'], 1);

    const done = await statusWhen(w, runId, (s) => s.status === 'DONE');
    assert.equal(done.outcome, 'SUCCESS');
    assert.equal(done.requestId, runId, 'the same run');
    assert.equal(done.redriveCount, 1);
    assert.equal(done.attempts?.length, 1);
    assert.equal(done.attempts?.[0]?.outcome, 'FAIL');
    assert.equal(done.attempts?.[0]?.errorCode, 'FLAKY');
    assert.equal(done.attempts?.[0]?.step, 'two');
    assert.deepEqual(
      (done.response as Record<string, unknown>)['one'],
      { held: 'o-1' },
      'the first step kept its output',
    );
    // only the failed step and those after it ran again, under the same run id
    assert.deepEqual(
      h.calls.map((c) => c.name),
      ['Reserve', 'Flaky', 'Flaky', 'Last'],
    );
    assert.ok(h.calls.every((c) => c.key.startsWith(`${runId}:`)));
    assert.equal(h.calls[2]!.key, h.calls[1]!.key, 'the failed step keeps its idempotency key');

    // a run that succeeded is not redrivable
    const again = await post(w, `/api/runs/${runId}/redrive`, { reason: 'again' });
    assert.equal(again.status, 409);
    assert.equal(again.body['code'], 'RUN_NOT_REDRIVABLE');
  } finally {
    await w.close();
  }
}
