import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../config/load.js';
import { checkWaitJournals } from '../runner/waits/check.js';
import { compileSagaPlan } from './compile.js';
import { compileSaga } from '../testing/compile-saga.js';
import type { RawSaga, RawStep } from './schema.js';

const sagaWith = (wait: Partial<RawStep>): RawSaga => ({
  id: 's',
  path: '/s',
  steps: [
    { id: 'start', type: 'start', links: [{ to: 'w' }] },
    { id: 'w', type: 'wait', links: [{ to: 'ok' }], ...wait } as RawStep,
    { id: 'ok', type: 'success' },
  ],
});
const errors = (saga: RawSaga) =>
  compileSagaPlan(saga, 5000)
    .issues.filter((i) => i.severity === 'error')
    .map((i) => `${i.at.join('.')}: ${i.message}`);

test('wait steps: each form checked with its location', () => {
  assert.deepEqual(errors(sagaWith({ for: '72h' })), []);
  assert.deepEqual(errors(sagaWith({ until: '$.parameters.at' })), []);
  assert.deepEqual(errors(sagaWith({ signal: { name: 'paid', key: 'parameters.order' }, timeout: '1h' })), []);
  assert.deepEqual(errors(sagaWith({})), ['steps.1: a wait step needs one of for, until (a timer) or signal']);
  assert.deepEqual(errors(sagaWith({ signal: { name: 'paid' } })), [
    'steps.1.timeout: required: a signal wait needs a timeout (no unbounded waits)',
  ]);
  assert.deepEqual(errors(sagaWith({ for: '1h', until: '$x' })), [
    'steps.1.until: a wait step is either a timer (for or until) or a signal, not for and until',
  ]);
  assert.deepEqual(errors(sagaWith({ for: '1h', timeout: '2h' })), [
    'steps.1.timeout: only a signal wait has a timeout (a timer ends when it is due)',
  ]);
  assert.deepEqual(errors(sagaWith({ for: '1h', approvals: { required: 2 } })), [
    'steps.1.approvals: approvals need a signal',
  ]);
  assert.deepEqual(errors(sagaWith({ for: 0 })), ['steps.1.for: must be longer than 0']);
  // past a Date's range no run could say when its wait is due: refused at load, not a 500 per run
  assert.deepEqual(errors(sagaWith({ for: '99999999999h' })), ['steps.1.for: must be at most 100 years']);
  assert.deepEqual(errors(sagaWith({ signal: { name: 'x' }, timeout: 1e17 })), [
    'steps.1.timeout: must be at most 100 years',
  ]);
  assert.deepEqual(errors(sagaWith({ for: '876000h' })), []);
  assert.match(errors(sagaWith({ until: '$.(' }))[0] ?? '', /^steps\.1\.until: JSONata: /);
  assert.match(
    errors(sagaWith({ signal: { name: 'x', key: '((' }, timeout: '1h' }))[0] ?? '',
    /^steps\.1\.signal\.key: JSONata/,
  );
  assert.match(
    errors(sagaWith({ signal: { name: 'x', schema: { type: 'nonsense' } }, timeout: '1h' }))[0] ?? '',
    /^steps\.1\.signal\.schema: not a valid JSON Schema/,
  );
  // wait fields on another kind of step
  const other = sagaWith({ for: '1h' });
  (other.steps[2] as RawStep).timeout = '1h';
  assert.deepEqual(errors(other), ['steps.2.timeout: only a wait step has timeout']);
});

test('a wait step compiles to its plan: durations in ms, expressions compiled', () => {
  const saga = compileSaga(
    sagaWith({
      signal: { name: 'ok', key: 'parameters.id', roles: ['manager'] },
      timeout: '72h',
      approvals: { required: 2 },
    }),
    10_000,
  );
  const step = saga.steps.get('w');
  assert.equal(step?.type, 'wait');
  if (step?.type !== 'wait') return;
  assert.equal(step.wait.timeoutMs, 72 * 3600_000);
  assert.deepEqual(step.wait.signal?.roles, ['manager']);
  assert.deepEqual(step.wait.approvals, { required: 2, selfApproval: false });
  assert.equal(step.wait.signal?.key?.source, 'parameters.id');
});

test('the config schema: a wait step in a file loads; an unknown wait field is refused at its line', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sagaway-wait-schema-'));
  try {
    const file = join(dir, 'sagaway.yaml');
    const yaml = (extra: string) => `
runners:
  r:
    sagas:
      - id: s
        path: /s
        steps:
          - { id: start, type: start, links: [{ to: w }] }
          - id: w
            type: wait
            signal: { name: approved${extra} }
            timeout: 1h
            links: [{ to: ok }]
          - { id: ok, type: success }
`;
    await writeFile(file, yaml(''));
    const warnings: string[] = [];
    const loaded = await loadConfig(file, {
      check: async (settings, report) => {
        checkWaitJournals(settings, (f, at, m, sev) => {
          warnings.push(`${sev ?? 'error'} ${at.join('.')}: ${m}`);
          report(f, at, m, sev);
        });
      },
    });
    assert.equal(loaded.settings.runners['r']?.plans[0]?.steps.get('w')?.type, 'wait');
    assert.deepEqual(warnings, [
      'warning runners.r.sagas.0.steps.1: a wait step needs a journal; runners.r.journal is not set, so `sagaway start` keeps one in .sagaway/journal.db',
    ]);
    await writeFile(file, yaml(', colour: red'));
    await assert.rejects(loadConfig(file), (e: Error) => /sagaway\.yaml:\d+:\d+ .*signal/.test(e.message));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
