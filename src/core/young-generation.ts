import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * How `sagaway start`, `gateway` and `runner` size V8's young generation (issue 23 item 4,
 * docs/operations.md "Memory"). Node 20–24 let it grow to two semi-spaces of 16 MiB; a process
 * fills them while it loads its modules and configuration and never gives the pages back, so an
 * idle gateway held ≈ 16 MiB of empty young generation, and ≈ 30 MiB under load. Here the
 * growth factor (the one V8 setting that V8 reads again at each growth, so it can be changed
 * after start-up; `--max-semi-space-size` cannot) is 1 while the process starts, and afterwards
 * the young generation may grow only up to YOUNG_GENERATION_CAP: a smaller one costs scavenges
 * (1 MiB semi-spaces cost ≈ +10% CPU per one-shot request, 4 MiB as much as 16: BENCHMARKS.md).
 * An operator who passes `--max-semi-space-size` or `--semi-space-growth-factor` (command line
 * or NODE_OPTIONS), or sets SAGAWAY_HEAP_TUNING=off, keeps V8's own behaviour.
 */

/**
 * The young generation's cap once the process is up: two semi-spaces of 4 MiB on Node 20, of
 * 8 MiB on Node 22 and later, whose V8 pays ≈ 3–7% more CPU per one-shot request with 4 MiB
 * ones (the same as `--max-semi-space-size=4` given at start; BENCHMARKS.md) and nothing at 8.
 */
export const YOUNG_GENERATION_CAP = (Number(process.versions.node.split('.')[0]) >= 22 ? 16 : 8) * 1024 * 1024;
/**
 * How long after `start` or `gateway` listens the young generation is released: the deferred
 * start-up work (the sagas' schemas compiled 200 ms after listen) is done by then, and what it
 * leaves behind does not grow it (≈ 2–3 MiB of idle RSS, BENCHMARKS.md).
 */
export const RELEASE_AFTER_LISTEN_MS = 2000;
/** V8's own growth factor (the same on Node 20, 22 and 24). */
const V8_GROWTH_FACTOR = 2;

const OWN_SETTING = /--(?:max|min)[-_]semi[-_]space[-_]size|--semi[-_]space[-_]growth[-_]factor/;

let held = false;
let released = false;
let factor = V8_GROWTH_FACTOR;
let observer: PerformanceObserver | undefined;

function setGrowthFactor(value: number): void {
  if (value === factor) return;
  factor = value;
  setFlagsFromString(`--semi-space-growth-factor=${value}`);
}

/** Whether this process leaves V8's young generation alone (the operator's own setting, or off). */
export function heapTuningOff(env: NodeJS.ProcessEnv = process.env, execArgv: string[] = process.execArgv): boolean {
  if (env['SAGAWAY_HEAP_TUNING'] === 'off') return true;
  return OWN_SETTING.test(env['NODE_OPTIONS'] ?? '') || execArgv.some((a) => OWN_SETTING.test(a));
}

/**
 * Keep the young generation at its initial size (two semi-spaces of 1 MiB) while the process
 * starts: what survives the loading of modules and configuration is promoted instead of growing
 * it. Call before the command's modules load; `releaseYoungGeneration` once it serves.
 */
export function holdYoungGeneration(): void {
  if (held || heapTuningOff()) return;
  held = true;
  setGrowthFactor(1);
}

/**
 * The process is up: from its next scavenge on, the young generation may grow again, up to
 * YOUNG_GENERATION_CAP. A GC observer watches only while it grows (a few µs per scavenge) and
 * turns growth off at the cap (a soft cap: the observer runs after the GC, so a burst of
 * scavenges can take it one doubling past, which V8 shrinks back once allocation slows); every RECHECK_MS a timer lets it grow again if V8 shrank it
 * meanwhile (V8 does at a GC while little is allocated). After `delayMs` if given. Timers do not
 * hold the process open. No-op unless held.
 */
export function releaseYoungGeneration(delayMs = 0): void {
  if (!held || released) return;
  if (delayMs > 0) {
    setTimeout(() => releaseYoungGeneration(), delayMs).unref();
    return;
  }
  released = true;
  watchGrowth();
  setInterval(() => {
    if (!observer && youngGenerationSize() < YOUNG_GENERATION_CAP) watchGrowth();
  }, RECHECK_MS).unref();
}

/** How often a released young generation is checked for having been shrunk by V8. */
const RECHECK_MS = 5000;

function youngGenerationSize(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

function watchGrowth(): void {
  setGrowthFactor(V8_GROWTH_FACTOR);
  const watch = new PerformanceObserver(() => {
    if (youngGenerationSize() < YOUNG_GENERATION_CAP) return;
    setGrowthFactor(1);
    watch.disconnect();
    observer = undefined;
  });
  watch.observe({ entryTypes: ['gc'] });
  observer = watch;
}

/**
 * Run `compile` with V8's flags as the build had them: a code cache (src/config/compiled-script.ts)
 * is rejected when any flag differs from the writer's, and a changed growth factor counts.
 */
export function withBuildFlags<T>(compile: () => T): T {
  if (factor === V8_GROWTH_FACTOR) return compile();
  const own = factor;
  setGrowthFactor(V8_GROWTH_FACTOR);
  try {
    return compile();
  } finally {
    setGrowthFactor(own);
  }
}
