import type { RunRecord } from '../core/trace.js';
import type { ValueMask } from './system.js';

/**
 * The run with each step's payload snapshot passed through `mask`, before it leaves the process:
 * a snapshot is JSON of at most `gateway.console.snapshot` bytes, parsed, masked and written
 * again (bounded work). A snapshot cut at that size is not JSON any more: it travels as the
 * runner cut it, with the keys that name credentials already masked (core/trace.ts snapshotOf).
 */
export function maskSnapshots(run: RunRecord, mask: ValueMask): RunRecord {
  return {
    ...run,
    steps: run.steps.map((step) => {
      if (step.payload === undefined) return step;
      let value: unknown;
      try {
        value = JSON.parse(step.payload);
      } catch {
        return step;
      }
      return { ...step, payload: JSON.stringify(mask(value)) ?? '' };
    }),
  };
}
