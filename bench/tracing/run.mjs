#!/usr/bin/env node
/* global performance */
// The cost of OpenTelemetry tracing per saga run (issue 22 item 4: "free when off, ≤ 1 µs per
// request"), in process, side by side in alternating rounds:
//   before   the same saga on a build without tracing (--before TREE: a checkout of the commit before, built)
//   off      this build, tracing off (no tracer installed: the default)
//   on       this build, tracing on, every run sampled, spans exported over OTLP/HTTP to a sink
//            in this process (the sink's own CPU is counted too: an upper bound)
// The saga is bench/engine's 4-step one (start -> event -> condition -> success), run by the
// runner as a gateway request is (Runner.run), one run in flight.
//   npm run build && node bench/tracing/run.mjs [--before /path/to/old/tree (its dist/ built)] [--seconds 2] [--rounds 7] [--off-only]
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(here, '..', '..');
const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '7' },
    // --off-only: before and off alone (the on side's exports and garbage land in the others' rounds)
    'off-only': { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);

const saga = {
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
const files = { 'map-store.mjs': readFileSync(join(ROOT, 'bench', 'engine', 'map-store.mjs'), 'utf8') };

async function runnerOf(dist) {
  const { startTestHost } = await import(join(dist, 'src', 'testing', 'index.js'));
  const h = await startTestHost({ runners: { bench: { handlers: ['./map-store.mjs'], sagas: [saga] } } }, { files });
  return { h, runner: h.host.runners.get('bench') };
}

const sink = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
});
await new Promise((r) => sink.listen(0, '127.0.0.1', r));

const ours = await runnerOf(join(ROOT, 'dist'));
const otel = await import(join(ROOT, 'dist', 'src', 'core', 'otel.js'));
const { startTracing } = await import(join(ROOT, 'dist', 'src', 'systems', 'otel', 'sdk.js'));
const tracer = await startTracing({
  url: `http://127.0.0.1:${sink.address().port}/v1/traces`,
  serviceName: 'bench',
  sampleRatio: 1,
  headers: {},
});
const before = values.before ? await runnerOf(join(resolve(values.before), 'dist')) : undefined;

const sides = [
  ...(before ? [{ name: 'before (no tracing code)', runner: before.runner, tracing: undefined }] : []),
  { name: 'off', runner: ours.runner, tracing: undefined },
  ...(values['off-only'] ? [] : [{ name: 'on (100% sampled, OTLP/HTTP)', runner: ours.runner, tracing: tracer }]),
];

async function measure(side) {
  otel.installTracing(side.tracing);
  const end = performance.now() + seconds * 1000;
  let n = 0;
  const t0 = performance.now();
  while (performance.now() < end) {
    for (let i = 0; i < 100; i++) {
      const id = String(((n + i) % 1000) & ~1);
      const r = await side.runner.run({
        method: 'GET',
        path: `/items/${id}`,
        input: {},
        query: {},
        requestId: randomUUID(),
        user: null,
      });
      if (r.outcome !== 'SUCCESS') throw new Error(`unexpected ${JSON.stringify(r)}`);
    }
    n += 100;
  }
  return ((performance.now() - t0) * 1000) / n; // µs per run
}

const load = loadavg()
  .map((x) => x.toFixed(1))
  .join(' ');
for (const side of sides) await measure(side); // warm-up
const results = new Map(sides.map((s) => [s.name, []]));
for (let r = 0; r < rounds; r++) for (const side of sides) results.get(side.name).push(await measure(side));
otel.installTracing(undefined);
await tracer.shutdown();
await ours.h.close();
await before?.h.close();
sink.close();

// The off path's own functions, called alone (tracing off): what a run pays for them.
const { runSpan, endRunSpan } = await import(join(ROOT, 'dist', 'src', 'runner', 'orchestrator', 'run-span.js'));
function nsPerCall(fn, n = 5e6) {
  fn(); // warm
  const t0 = performance.now();
  for (let i = 0; i < n; i++) fn(i);
  return ((performance.now() - t0) * 1e6) / n;
}
const done = { outcome: 'SUCCESS', http: 200 };
let sink2;
const hookNs = Math.min(
  ...[1, 2, 3].map(() =>
    nsPerCall(() => {
      const span = runSpan('request', 'get-item', 'r', 'bench', undefined);
      endRunSpan(span, done);
      sink2 = span;
    }),
  ),
);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const min = (xs) => Math.min(...xs);
console.log(`Node ${process.version}, load average ${load} at start, ${rounds} alternating rounds of ${seconds} s\n`);
console.log('| side | µs per run (median) | µs per run (best round) |');
console.log('|---|---|---|');
for (const side of sides) {
  const xs = results.get(side.name);
  console.log(`| ${side.name} | ${median(xs).toFixed(2)} | ${min(xs).toFixed(2)} |`);
}
console.log(
  `\nOff path, the run's span functions alone (runSpan + endRunSpan, tracing off): ${hookNs.toFixed(1)} ns per run` +
    (sink2 === undefined ? '' : ' (!)'),
);
