#!/usr/bin/env node
/* global performance */
// In-process saga runs per second versus a hand-written async function doing the same work.
//   npm run build && node bench/engine/run.mjs [--seconds 3] [--rounds 3] [--steps 4|1]
// Saga (--steps 4, the default): start -> event (mapstore.Get on a Map) -> condition
// (item.active) -> success. --steps 1: start -> event -> success, the saga of bench/oneshot (the
// issue-10 target "a 1-step saga ≥ 200,000 runs/s on one core", bench/request-path.mjs).
// Both sides run sequentially (one run in flight), alternating rounds in one process, so the
// ratio is measured side by side on the same machine state.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startTestHost } from '../../dist/src/testing/index.js';
import { items } from './map-store.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    steps: { type: 'string', default: '4' },
  },
});
if (!['1', '4'].includes(values.steps)) throw new Error(`--steps 1 or 4, not ${values.steps}`);
const oneStep = values.steps === '1';
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);

const fourSteps = {
  id: 'get-item',
  path: '/items/:id',
  steps: [
    { id: 'start', type: 'start', links: [{ to: 'load' }] },
    {
      id: 'load',
      type: 'event',
      eventMeta: {
        handler: 'mapstore',
        action: 'Get',
        version: 0,
        inputElement: 'parameters',
        outputElement: '$.item',
      },
      links: [
        { to: 'check', when: ['SUCCESS'] },
        { to: 'missing', when: ['*'] },
      ],
    },
    {
      id: 'check',
      type: 'condition',
      expression: 'item.active',
      links: [
        { to: 'done', when: [true] },
        { to: 'inactive', when: ['*'] },
      ],
    },
    { id: 'done', type: 'success', outputElement: 'item' },
    { id: 'inactive', type: 'fail', error: { code: 'INACTIVE', http: 409 } },
    { id: 'missing', type: 'fail' },
  ],
};
// The saga of bench/oneshot/sagaway.yaml: one event step, its output is the answer.
const oneStepSaga = {
  id: 'get-item',
  path: '/items/:id',
  steps: [
    { id: 'start', type: 'start', links: [{ to: 'load' }] },
    {
      ...fourSteps.steps[1],
      links: [
        { to: 'done', when: ['SUCCESS'] },
        { to: 'missing', when: ['*'] },
      ],
    },
    { id: 'done', type: 'success', outputElement: 'item' },
    { id: 'missing', type: 'fail' },
  ],
};
const saga = oneStep ? oneStepSaga : fourSteps;

const h = await startTestHost(
  { runners: { bench: { handlers: ['./map-store.mjs'], sagas: [saga] } } },
  { files: { 'map-store.mjs': readFileSync(join(here, 'map-store.mjs'), 'utf8') } },
);
const runner = h.host.runners.get('bench');

// The same work written by hand: read, branch, answer.
async function handWritten(id) {
  const item = items.get(id);
  if (!item) return { outcome: 'FAIL', http: 404 };
  if (oneStep || item.active) return { outcome: 'SUCCESS', http: 200, response: item };
  return { outcome: 'FAIL', http: 409 };
}

async function viaSaga(id) {
  return runner.run({ method: 'GET', path: `/items/${id}`, input: {}, query: {}, requestId: randomUUID(), user: null });
}

async function measure(fn) {
  const end = performance.now() + seconds * 1000;
  let n = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 100; i++) {
      const r = await fn(String(((n + i) % 1000) & ~1)); // even ids: active items
      if (r.outcome !== 'SUCCESS') throw new Error(`unexpected ${JSON.stringify(r)}`);
    }
    n += 100;
  }
  return n / seconds;
}

await measure(viaSaga); // warm-up
await measure(handWritten);
const sagaRates = [];
const handRates = [];
for (let r = 0; r < rounds; r++) {
  sagaRates.push(await measure(viaSaga));
  handRates.push(await measure(handWritten));
}
await h.close();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const s = median(sagaRates);
const b = median(handRates);
const row = {
  workload: `${oneStep ? '1-step' : '4-step'} saga in process (one core, sequential)`,
  sagaway: Math.round(s),
  handWritten: Math.round(b),
  ratio: +(s / b).toFixed(4),
};
console.log(JSON.stringify(row));
