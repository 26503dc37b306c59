import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RawSaga } from './schema.js';
import { compileSagaPlan } from './compile.js';
import { compileSaga } from '../testing/compile-saga.js';
import { selectLink } from './links.js';

const errors = (saga: RawSaga) =>
  compileSagaPlan(saga, 5000)
    .issues.filter((i) => i.severity === 'error')
    .map((i) => `${i.at.join('.')}: ${i.message}`);

test('unknown ids, duplicate ids, missing start', () => {
  assert.deepEqual(
    errors({
      id: 's',
      path: '/',
      steps: [
        { id: 'a', type: 'success' },
        { id: 'a', type: 'fail' },
      ],
    }),
    ['steps.1.id: duplicate step id "a"', 'steps: no start step'],
  );
  const e = errors({
    id: 's',
    path: '/',
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'nope' }] },
      { id: 'ok', type: 'success' },
    ],
  });
  assert.deepEqual(e, ['steps.0.links.0.to: unknown step "nope"; steps: ok, start'], 'no follow-on reachability noise');
  const unreachable = errors({
    id: 's',
    path: '/',
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'ok' }] },
      { id: 'ok', type: 'success' },
      { id: 'lost', type: 'fail' },
    ],
  });
  assert.deepEqual(unreachable, ['steps.2: step "lost" can never be reached from the start']);
});

test('dead ends: a step without links, and a loop that can never end', () => {
  assert.deepEqual(errors({ id: 's', path: '/', steps: [{ id: 'start', type: 'start' }] }), [
    'steps.0: step "start" has no links: the saga can end nowhere',
  ]);
  const loop: RawSaga = {
    id: 's',
    path: '/',
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'a' }] },
      { id: 'a', type: 'condition', expression: 'true', links: [{ to: 'b' }] },
      { id: 'b', type: 'condition', expression: 'true', links: [{ to: 'a' }] },
    ],
  };
  assert.ok(errors(loop).some((m) => m.includes('no path leads to a success or fail step')));
});

test('bad JSONata is located at the expression', () => {
  const e = errors({
    id: 's',
    path: '/',
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'c' }] },
      { id: 'c', type: 'condition', expression: 'a +', links: [{ to: 'ok' }] },
      { id: 'ok', type: 'success' },
    ],
  });
  assert.equal(e.length, 1);
  assert.match(e[0] as string, /^steps\.1\.expression: JSONata/);
});

test('selectLink: when, "*", no-when only on success, priority then order', () => {
  const saga = compileSaga(
    {
      id: 's',
      path: '/',
      steps: [
        { id: 'start', type: 'start', links: [{ to: 'c' }] },
        {
          id: 'c',
          type: 'condition',
          expression: '1',
          links: [
            { to: 'star', when: ['*'] },
            { to: 'plain' },
            { to: 'x1', when: ['x'] },
            { to: 'x2', when: ['x'], priority: 1 },
            { to: 'fail1', when: ['FAIL'] },
          ],
        },
        ...['star', 'plain', 'x1', 'x2', 'fail1'].map((id) => ({ id, type: 'success' as const })),
      ],
    },
    1000,
  );
  const c = saga.steps.get('c')!;
  assert.equal(selectLink(c, 'x', false)?.to, 'x2');
  assert.equal(selectLink(c, 'other', false)?.to, 'plain');
  assert.equal(selectLink(c, 'FAIL', true)?.to, 'fail1');
  assert.equal(selectLink(c, 'TIMEOUT', true)?.to, 'star');
});
