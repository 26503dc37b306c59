import { parseArgs, type ParseArgsConfig } from 'node:util';
import { SagawayError } from '../core/errors.js';

/** Options the commands accept (each command takes only its own, see COMMAND_OPTIONS). */
export interface CliOptions {
  config?: string;
  port?: string;
  host?: string;
  method?: string;
  data?: string;
  runner?: string;
  deployment?: string;
  user?: string;
  roles?: string;
  sub?: string;
  ttl?: string;
  sagaway?: string;
  system?: string;
  force?: boolean;
  'dry-run'?: boolean;
  json?: boolean;
  help?: boolean;
  /** run: the waits' clock at the start, and each move of it while the run waits */
  clock?: string;
  advance?: string[];
}

type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/** Every option, once: its type and short form. */
const OPTIONS: OptionSpec = {
  config: { type: 'string', short: 'c' },
  port: { type: 'string', short: 'p' },
  host: { type: 'string' },
  method: { type: 'string', short: 'X' },
  data: { type: 'string', short: 'd' },
  runner: { type: 'string' },
  deployment: { type: 'string' },
  user: { type: 'string' },
  roles: { type: 'string' },
  sub: { type: 'string' },
  ttl: { type: 'string' },
  sagaway: { type: 'string' },
  system: { type: 'string' },
  force: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  clock: { type: 'string' },
  advance: { type: 'string', multiple: true },
};

/** The options of each command; an option of another command is a usage error. */
export const COMMAND_OPTIONS: Readonly<Record<string, readonly (keyof CliOptions)[]>> = {
  start: ['config', 'port', 'host'],
  gateway: ['config', 'port', 'host'],
  runner: ['config', 'runner', 'deployment', 'port', 'host'],
  validate: ['config'],
  run: ['config', 'method', 'data', 'user', 'roles', 'clock', 'advance'],
  routes: ['config'],
  token: ['config', 'sub', 'roles', 'ttl'],
  init: ['sagaway'],
  admin: ['config', 'system', 'runner', 'deployment', 'force', 'dry-run', 'json'],
};

/** Parse a command's arguments; unknown options, and options of other commands, are errors. */
export function parseCommandArgs(command: string, argv: string[]): { options: CliOptions; positionals: string[] } {
  const names = [...(COMMAND_OPTIONS[command] ?? []), 'help'];
  const options: OptionSpec = {};
  for (const name of names) options[name] = OPTIONS[name]!;
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true, options });
  return { options: values as CliOptions, positionals };
}

/** `--roles a,b` as a list: trimmed, empty items dropped. */
export function parseRoles(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '');
}

/** Refuse positionals where a command takes none. */
export function noPositionals(command: string, positionals: string[]): void {
  if (positionals.length > 0)
    throw new SagawayError('VALIDATION_FAILED', `${command} takes no argument "${positionals[0]}" (see --help)`);
}
