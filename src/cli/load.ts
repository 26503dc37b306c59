import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, type LoadedConfig } from '../config/load.js';
import { BUILTIN_HANDLERS } from '../handlers/index.js';
import { checkDistributed } from '../runner/check-distributed.js';
import { checkHandlers } from '../runner/check-handlers.js';

/** The example bundled with the package, used by `sagaway start` when no ./sagaway.yaml exists. */
export const BUNDLED_EXAMPLE = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'examples',
  'todo',
  'sagaway.yaml',
);

/** Which config file a command uses: --config, else ./sagaway.yaml, else (start only) the bundled example. */
export function configPath(option: string | undefined, allowBundled: boolean): string | undefined {
  if (option) return resolve(option);
  if (existsSync('sagaway.yaml')) return resolve('sagaway.yaml');
  return allowBundled ? BUNDLED_EXAMPLE : undefined;
}

/** Load a configuration with every check, handler versions included. */
export function loadChecked(file: string): Promise<LoadedConfig> {
  return loadConfig(file, {
    check: async (settings, report) => {
      checkDistributed(settings, report);
      await checkHandlers(settings, BUILTIN_HANDLERS, report);
    },
  });
}
