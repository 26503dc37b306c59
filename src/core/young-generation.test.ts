import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { heapTuningOff, YOUNG_GENERATION_CAP } from './young-generation.js';

const MODULE = pathToFileURL(new URL('./young-generation.js', import.meta.url).pathname).href;
const MiB = 1024 * 1024;

/**
 * Runs `body` in a fresh Node (V8 flags are per process) after importing the module as `y`, with
 * `newSpace()` (the young generation's size) and `churn(mb)` (allocates `mb` MiB over event-loop
 * turns, keeping a tenth of it, so that scavenges see survivors and the observer gets its turns).
 */
function child(body: string, env: NodeJS.ProcessEnv = {}): unknown {
  const script = `
    import * as y from ${JSON.stringify(MODULE)};
    import { getHeapSpaceStatistics } from 'node:v8';
    const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    const kept = [];
    async function churn(mb) {
      for (let i = 0; i < mb * 16; i++) {
        const chunk = [];
        for (let j = 0; j < 512; j++) chunk.push({ i, j, s: 'x' + j });
        if (i % 10 === 0) kept.push(chunk);
        if (i % 8 === 0) await new Promise((r) => setImmediate(r));
      }
    }
    ${body}`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, NODE_OPTIONS: '', SAGAWAY_HEAP_TUNING: '', ...env },
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

test("the operator's own young-generation setting, or SAGAWAY_HEAP_TUNING=off, turns the tuning off", () => {
  assert.equal(heapTuningOff({}, []), false);
  assert.equal(heapTuningOff({ NODE_OPTIONS: '--max-old-space-size=512' }, ['--enable-source-maps']), false);
  assert.equal(heapTuningOff({ SAGAWAY_HEAP_TUNING: 'off' }, []), true);
  assert.equal(heapTuningOff({ NODE_OPTIONS: '--max-semi-space-size=16' }, []), true);
  assert.equal(heapTuningOff({}, ['--max_semi_space_size=8']), true);
  assert.equal(heapTuningOff({}, ['--semi-space-growth-factor=4']), true);
  assert.equal(heapTuningOff({ NODE_OPTIONS: '--min-semi-space-size=2' }, []), true);
});

test('held, the young generation stays small; released, it grows up to the cap and no further', () => {
  const r = child(`
    y.holdYoungGeneration();
    await churn(40);
    const held = newSpace();
    y.releaseYoungGeneration();
    let released = 0;
    for (let k = 0; k < 6; k++) { await churn(40); released = Math.max(released, newSpace()); }
    console.log(JSON.stringify({ held, released }));
  `) as { held: number; released: number };
  assert.ok(r.held <= 2 * MiB, `no growth past V8's initial 2 MiB while held (${r.held / MiB} MiB)`);
  assert.ok(r.released > r.held, `it grows again once released (${r.released / MiB} MiB)`);
  assert.ok(r.released <= YOUNG_GENERATION_CAP, `at most the cap (${r.released / MiB} MiB)`);
});

test('with SAGAWAY_HEAP_TUNING=off, V8 grows the young generation as it always did', () => {
  const r = child(
    `
    y.holdYoungGeneration();
    await churn(40);
    console.log(JSON.stringify({ held: newSpace() }));
  `,
    { SAGAWAY_HEAP_TUNING: 'off' },
  ) as { held: number };
  assert.ok(r.held > 2 * MiB, `V8's own growth (${r.held / MiB} MiB)`);
});

test("a code cache written with V8's default flags is accepted inside withBuildFlags while held, and only there", () => {
  // each check in a process of its own: V8's in-memory compilation cache would answer a repeat
  const dir = mkdtempSync(join(tmpdir(), 'sagaway-young-'));
  const source = 'function f(a) { return a + 1 } f(1)';
  writeFileSync(join(dir, 'c.js'), source);
  const load = `const { Script } = await import('node:vm'); const { readFileSync } = await import('node:fs');
    const source = readFileSync(${JSON.stringify(join(dir, 'c.js'))}, 'utf8');
    const cache = ${JSON.stringify(join(dir, 'c.cache'))};`;
  try {
    child(`${load} (await import('node:fs')).writeFileSync(cache, new Script(source, { filename: 'c.js' }).createCachedData());
      console.log('{}');`);
    const compile = (wrap: boolean) =>
      child(`${load} y.holdYoungGeneration();
        const make = () => new Script(source, { filename: 'c.js', cachedData: readFileSync(cache) });
        console.log(JSON.stringify(${wrap ? 'y.withBuildFlags(make)' : 'make()'}.cachedDataRejected));`);
    assert.equal(compile(true), false, 'accepted inside withBuildFlags');
    assert.equal(compile(false), true, 'rejected outside it: the growth factor is part of the flags V8 checks');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
