import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

/**
 * The command line starts at once (docs/cli.md, "Start-up cost") because each command's module is
 * imported when it runs and the config validators are compiled at build time. This walks the
 * static imports of the compiled modules (dynamic `import()` is not followed) and checks which
 * packages a command loads before it does anything: adding a static import of fastify, a broker
 * client or TypeBox to the config loader would make every `sagaway validate` pay for it.
 */

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');
// a static import, or a package required as the module loads (`createRequire(import.meta.url)('x')`)
const STATIC_IMPORT =
  /^(?:import|export)\s[^;]*?from\s+'([^']+)'|^import\s+'([^']+)'|createRequire\(import\.meta\.url\)\('([^']+)'\)/gm;

/** The modules under dist/src and the packages (not node: builtins) statically reachable from `entry`. */
function graphOf(entry: string): { modules: Set<string>; packages: Set<string> } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const walk = (file: string): void => {
    if (modules.has(file)) return;
    modules.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      const spec = (m[1] ?? m[2] ?? m[3]) as string;
      if (spec.startsWith('.')) walk(resolve(dirname(file), spec));
      else if (!spec.startsWith('node:'))
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] as string));
    }
  };
  walk(join(SRC, entry));
  return { modules, packages };
}
const packagesOf = (entry: string): Set<string> => graphOf(entry).packages;

test('sagaway --version and --help load no package at all', () => {
  assert.deepEqual([...packagesOf('cli/main.js')], []);
});

test('sagaway validate loads only JSONata (and the YAML parser from its build-time script)', () => {
  // pino is required at the first logger made (core/logger.ts), tinyglobby for a glob that is
  // more than wildcards in a file name (config/saga-files.ts), Ajv at the first schema compiled;
  // the yaml package's files run from one script (config/yaml-script.ts), not as its modules
  const loaded = [...packagesOf('cli/validate.js')].sort();
  assert.deepEqual(loaded, ['jsonata']);
});

test('the walk sees static imports: sagaway start loads fastify', () => {
  assert.ok(packagesOf('cli/start.js').has('fastify'));
});

test('sagaway validate loads neither the engine, the wait stores and poller, nor unlisted handlers', () => {
  // the wait checks need only whether a saga waits (runner/waits/check.ts), not the host's waits
  const { modules } = graphOf('cli/validate.js');
  // and the built-in handlers its runners list are imported when it checks them (builtin-loaders.ts)
  for (const heavy of [
    'saga/engine.js',
    'runner/waits/host-waits.js',
    'states/waits/open.js',
    'handlers/rest/index.js',
  ])
    assert.ok(!modules.has(join(SRC, heavy)), `validate loads ${heavy}`);
});
