import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '../../core/logger.js';
import type { EventReply } from '../../core/messages.js';
import { PendingReplies, type PendingEvent } from './pending.js';

function pending(eventId: string, targets: number, got: EventReply[]): PendingEvent {
  return {
    eventId,
    stream: 's',
    stepId: 'e',
    system: 'bus',
    targets: Array.from({ length: targets }, (_, i) => ({ runner: 'r', deployment: String(i + 1) })),
    messages: new Map(),
    exhausted: new Set(),
    rounds: 0,
    seqKeys: [],
    resolve: (r) => got.push(r),
  };
}

const ok = (deployment: string): EventReply => ({
  status: 'SUCCESS',
  output: deployment,
  inputElement: null,
  outputElement: null,
  deployment,
});

test('the first reply wins; a duplicate (another deployment, a redelivery) is logged and dropped', () => {
  const warnings: unknown[] = [];
  const log = { ...silentLogger(), warn: (o: unknown) => warnings.push(o), debug: () => undefined } as never;
  const p = new PendingReplies(log);
  const got: EventReply[] = [];
  p.add(pending('e1', 2, got));
  p.reply('e1', ok('2'), 'r');
  p.reply('e1', ok('1'), 'r');
  assert.deepEqual(
    got.map((r) => r.deployment),
    ['2'],
  );
  assert.equal(warnings.length, 1);
  assert.equal(p.byId.size, 0);
});

test('max-delivery advisories: the step fails only when every target ran out', () => {
  const p = new PendingReplies(silentLogger());
  const got: EventReply[] = [];
  p.add(pending('e1', 2, got));
  p.published('bus', 10, 'e1', 'r/1');
  p.published('bus', 11, 'e1', 'r/2');
  p.exhausted('bus', 10);
  assert.equal(got.length, 0);
  p.exhausted('bus', 99); // unknown sequence: ignored
  p.exhausted('bus', 11);
  assert.equal(got.length, 1);
  assert.equal(got[0]!.error?.code, 'EVENT_DELIVERY_EXHAUSTED');
});
