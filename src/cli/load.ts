import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig, type LoadedConfig } from '../config/load.js';
import { routeWarnings } from '../gateway/apis/route-check.js';
import { shareAllUserReads } from '../gateway/stream/share-check.js';
import { listedBuiltinHandlers } from '../handlers/builtin-loaders.js';
import { checkDistributed } from '../runner/check-distributed.js';
import { checkHandlers } from '../runner/check-handlers.js';
import { PACKAGE_ROOT } from './package-info.js';
import { checkCallbackKey, checkSignalHomes, checkWaitJournals } from '../runner/waits/check.js'; // waits:

/** The example bundled with the package, used by `sagaway start` when no ./sagaway.yaml exists. */
export const BUNDLED_EXAMPLE = join(PACKAGE_ROOT, 'examples', 'todo', 'sagaway.yaml');

/** Which config file a command uses: --config, else ./sagaway.yaml, else (start only) the bundled example. */
export function configPath(option: string | undefined, allowBundled: boolean): string | undefined {
  if (option) return resolve(option);
  if (existsSync('sagaway.yaml')) return resolve('sagaway.yaml');
  return allowBundled ? BUNDLED_EXAMPLE : undefined;
}

/**
 * Load a configuration with every check, handler versions included, and the route traps as
 * warnings (an API nobody can call, a saga the gateway cannot reach); a saga that reads the user
 * under an API that streams with `share: all` is an error.
 */
export function loadChecked(file: string): Promise<LoadedConfig> {
  return loadConfig(file, {
    check: async (settings, report) => {
      checkDistributed(settings, report);
      checkWaitJournals(settings, report); // waits:
      checkCallbackKey(settings, report); // waits:
      checkSignalHomes(settings, report); // waits:
      await checkHandlers(settings, await listedBuiltinHandlers(settings), report);
      for (const w of routeWarnings(settings)) report(w.file, w.at, w.message, 'warning');
      for (const e of shareAllUserReads(settings)) report(e.file, e.at, e.message, 'error');
    },
  });
}
