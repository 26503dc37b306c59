import { readFileSync } from 'node:fs';
import { Script } from 'node:vm';
import { withBuildFlags } from '../core/young-generation.js';

/**
 * Run a build-time generated script (`(function (require, exports) { … })`, plain ASCII) with
 * V8's code cache written beside it at build time (`FILE.cache`, write-validators.ts), and
 * return what it exports. The configuration's validators are one Ajv function of ≈ 1 MB of
 * source: as an ES module, parsing it and compiling it at its first call were ≈ 150 ms of every
 * command that loads a configuration (issue 23); with the cache V8 deserializes the compiled
 * code instead (≈ 20 ms). The cache only fits the Node (V8) version and flags that wrote it: any
 * other Node rejects it (V8 checks it) and compiles the source as before.
 */
export function runCompiledScript(file: string, require: NodeJS.Require): Record<string, unknown> {
  // latin1: one byte per character, no UTF-8 decoding (the generator writes ASCII only)
  const source = readFileSync(file, 'latin1');
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(`${file}.cache`);
  } catch {
    // no cache (a build without it): compiled from source
  }
  // with the V8 flags the build ran with, or V8 rejects the cache (sagaway start's young generation)
  const script = withBuildFlags(() => new Script(source, { filename: file, ...(cachedData ? { cachedData } : {}) }));
  const exports: Record<string, unknown> = {};
  (script.runInThisContext() as (r: NodeJS.Require, e: Record<string, unknown>) => void)(require, exports);
  return exports;
}

/** The same script compiled, run by `exercise`, and its code cache (with what ran compiled). */
export function codeCacheOf(
  file: string,
  require: NodeJS.Require,
  exercise: (exports: Record<string, unknown>) => void,
): Buffer {
  const script = new Script(readFileSync(file, 'latin1'), { filename: file });
  const exports: Record<string, unknown> = {};
  (script.runInThisContext() as (r: NodeJS.Require, e: Record<string, unknown>) => void)(require, exports);
  exercise(exports);
  return script.createCachedData();
}
