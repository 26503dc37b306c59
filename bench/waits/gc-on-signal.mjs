// Preloaded (--import) into a measured process started with --expose-gc: SIGUSR2 runs a full
// garbage collection, so that RSS is read without garbage in it, and writes the process's
// memoryUsage() after it to $WAITBENCH_MEM (the V8 heap in use is steadier than RSS, which the
// allocator may give back to the system or not). Only the wait benchmarks use it.
import { writeFileSync } from 'node:fs';

process.on('SIGUSR2', () => {
  globalThis.gc?.();
  if (process.env.WAITBENCH_MEM) writeFileSync(process.env.WAITBENCH_MEM, JSON.stringify(process.memoryUsage()));
});
