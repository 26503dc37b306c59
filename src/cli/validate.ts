import { formatIssue, SagawayError } from '../core/errors.js';
import { noPositionals, type CliOptions } from './args.js';
import { configPath, loadChecked } from './load.js';

/**
 * `sagaway validate --config FILE`: check the file, every saga and every handler version.
 * Errors and warnings are printed one per line as `FILE:LINE:COL PATH: message`; exit 1 when
 * there are errors, 0 otherwise (warnings included). A ConfigError thrown here is printed by main.
 */
export async function validateCommand(options: CliOptions, positionals: string[]): Promise<number> {
  noPositionals('validate', positionals);
  const file = configPath(options.config, false);
  if (!file) throw new SagawayError('VALIDATION_FAILED', 'no --config given and no ./sagaway.yaml here');
  const { settings, warnings } = await loadChecked(file);
  for (const w of warnings) process.stdout.write(`${formatIssue(w)} (warning)\n`);
  const sagas = Object.values(settings.runners).reduce((n, r) => n + r.sagas.length, 0);
  process.stdout.write(`ok: ${Object.keys(settings.runners).length} runner(s), ${sagas} saga(s)\n`);
  return 0;
}
