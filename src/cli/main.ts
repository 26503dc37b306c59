#!/usr/bin/env node
import { ConfigError, formatIssue, SagawayError } from '../core/errors.js';
import { parseCommandArgs, type CliOptions } from './args.js';
import { COMMAND_HELP, USAGE } from './help.js';
import { packageVersion } from './package-info.js';
import { holdYoungGeneration } from '../core/young-generation.js';

type Command = (options: CliOptions, positionals: string[]) => Promise<number>;

/**
 * Each command's module, loaded only when that command runs: `sagaway --version` and `--help`
 * load none of them, and `validate` loads neither fastify nor a broker or store client
 * (docs/cli.md, "Start-up cost").
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  start: async () => (await import('./start.js')).startCommand,
  gateway: async () => (await import('./gateway.js')).gatewayCommand,
  runner: async () => (await import('./runner.js')).runnerCommand,
  validate: async () => (await import('./validate.js')).validateCommand,
  run: async () => (await import('./run.js')).runCommand,
  routes: async () => (await import('./routes.js')).routesCommand,
  token: async () => (await import('./token.js')).tokenCommand,
  admin: async () => (await import('./admin.js')).adminCommand,
  init: async () => (await import('./init/command.js')).initCommand,
};

/** The commands that serve until stopped; they release the young generation once they serve. */
const LONG_RUNNING = new Set(['start', 'gateway', 'runner']);

/** Entry point of the `sagaway` executable. Errors are printed as one line each, never a stack. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    // `sagaway help run` is `sagaway run --help`.
    const page = rest[0] !== undefined && Object.hasOwn(COMMAND_HELP, rest[0]) ? COMMAND_HELP[rest[0]] : USAGE;
    process.stdout.write(`${page}\n`);
    return command ? 0 : 2;
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  if (!Object.hasOwn(COMMANDS, command)) {
    process.stderr.write(`sagaway: unknown command "${command}"\n\n${USAGE}\n`);
    return 2;
  }
  const { options, positionals } = parseCommandArgs(command, rest);
  if (options.help) {
    process.stdout.write(`${COMMAND_HELP[command] ?? USAGE}\n`);
    return 0;
  }
  // The long-running commands start with a small young generation (docs/operations.md, "Memory").
  if (LONG_RUNNING.has(command)) holdYoungGeneration();
  const run = await (COMMANDS[command] as () => Promise<Command>)();
  return run(options, positionals);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const command = process.argv[2] ?? '';
    const help = Object.hasOwn(COMMAND_HELP, command) ? COMMAND_HELP[command] : USAGE;
    if (err instanceof ConfigError) {
      for (const issue of err.issues) process.stderr.write(`${formatIssue(issue)}\n`);
      // validate reports a broken file with 1; the other commands cannot start: 2 (DESIGN §9).
      process.exitCode = command === 'validate' ? 1 : 2;
    } else if (err instanceof SagawayError) {
      process.stderr.write(`sagaway: ${err.code}: ${err.message}\n`);
      process.exitCode = 2;
    } else if (err instanceof TypeError && (err as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`sagaway ${command}: ${err.message}\n\n${help}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`sagaway: unexpected error: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 2;
    }
  },
);
