import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileSagaPlan } from './compile.js';
import type { RawSaga } from './schema.js';

/** One compile pass per saga: its issues and its plan together. */

const saga = (steps: RawSaga['steps']): RawSaga => ({ id: 's', path: '/s', steps });

test('a saga without errors: its plan, with the warnings found on the way', () => {
  const { plan, issues } = compileSagaPlan(
    saga([
      { id: 'start', type: 'start', links: [{ to: 't' }] },
      { id: 't', type: 'transform', expression: '{"n": 1}', links: [{ to: 'ok' }] },
      { id: 'ok', type: 'success', links: [{ to: 't' }] },
    ]),
    3000,
  );
  assert.deepEqual(
    issues.map((i) => [i.severity, i.at.join('.')]),
    [['warning', 'steps.2.links']],
  );
  assert.ok(plan);
  assert.equal(plan.timeoutMs, 3000);
  const t = plan.steps.get('t');
  assert.ok(t?.type === 'transform');
  assert.equal(t.expression.source, '{"n": 1}');
  assert.equal(t.links[0]?.target, plan.steps.get('ok'));
});

test('a saga with an error: the issues, located, and no plan', () => {
  const { plan, issues } = compileSagaPlan(
    saga([
      { id: 'start', type: 'start', links: [{ to: 't' }] },
      { id: 't', type: 'transform', expression: '{"n": ', links: [{ to: 'ok' }] },
      { id: 'ok', type: 'success' },
    ]),
    3000,
  );
  assert.equal(plan, undefined);
  assert.deepEqual(
    issues.map((i) => [i.severity, i.at.join('.')]),
    [['error', 'steps.1.expression']],
  );
  assert.match(issues[0]!.message, /^JSONata: /);
});
