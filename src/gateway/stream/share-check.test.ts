import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Settings, ShareScope } from '../../config/settings.js';
import { shareAllUserReads } from './share-check.js';

function settings(share: ShareScope | undefined, steps: unknown[], actions: Record<string, unknown> = {}): Settings {
  const saga = { id: 's', path: '/feed', steps, source: { file: '/x.yaml', at: ['runners', 'r', 'sagas', 0] } };
  return {
    file: '/x.yaml',
    gateway: {
      apis: [{ path: '/feed', runner: 'r', roles: [], public: true, ...(share ? { stream: { share } } : {}) }],
      stream: { share: 'caller' },
      auth: { apiKeys: [] },
    },
    runners: { r: { sagas: [saga], actions } },
  } as unknown as Settings;
}

const start = { id: 'start', type: 'start', links: [{ to: 'x' }] };

test('share all: a saga that reads $user or @.user is reported at the step that reads it', () => {
  const jsonata = [start, { id: 'x', type: 'transform', expression: '{"list": [$user.sub]}' }];
  const inject = [
    start,
    { id: 'x', type: 'event', eventMeta: { handler: 'read', parameters: { owner: '@.user.sub' } } },
  ];
  for (const steps of [jsonata, inject]) {
    const [e] = shareAllUserReads(settings('all', steps));
    assert.ok(e, JSON.stringify(steps));
    assert.equal(e.at.slice(0, 6).join('.'), 'runners.r.sagas.0.steps.1');
    assert.match(e.message, /reads the user .* share: all/);
    assert.deepEqual(shareAllUserReads(settings('caller', steps)), [], 'caller: the run has the user');
    assert.deepEqual(shareAllUserReads(settings(undefined, steps)), [], 'default caller');
  }
});

test('share all: a structural action that injects the user counts; labels and other variables do not', () => {
  const steps = [start, { id: 'x', type: 'event', eventMeta: { action: 'Mine' } }];
  const actions = { Mine: { alias: 'Mine', meta: { 'parameters.owner': { override: '@.user.sub' } } } };
  assert.equal(
    shareAllUserReads(settings('all', steps, actions))[0]?.at.join('.'),
    'runners.r.sagas.0.steps.1.eventMeta.action',
  );
  const fine = [
    start,
    {
      id: 'x',
      type: 'transform',
      name: 'for $user',
      description: 'not @.user',
      expression: '{"u": $users, "r": $request.path}',
    },
  ];
  assert.deepEqual(shareAllUserReads(settings('all', fine)), []);
});
