#!/usr/bin/env node
import { adminCommand } from './admin.js';
import { ConfigError, formatIssue, SagawayError } from '../core/errors.js';
import { COMMAND_OPTIONS, parseCommandArgs } from './args.js';
import { gatewayCommand } from './gateway.js';
import { COMMAND_HELP, USAGE } from './help.js';
import { initCommand } from './init/command.js';
import { packageVersion } from './package-info.js';
import { routesCommand } from './routes.js';
import { runCommand } from './run.js';
import { runnerCommand } from './runner.js';
import { startCommand } from './start.js';
import { tokenCommand } from './token.js';
import { validateCommand } from './validate.js';

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
  if (!Object.hasOwn(COMMAND_OPTIONS, command)) {
    process.stderr.write(`sagaway: unknown command "${command}"\n\n${USAGE}\n`);
    return 2;
  }
  const { options, positionals } = parseCommandArgs(command, rest);
  if (options.help) {
    process.stdout.write(`${COMMAND_HELP[command] ?? USAGE}\n`);
    return 0;
  }
  switch (command) {
    case 'start':
      return startCommand(options, positionals);
    case 'gateway':
      return gatewayCommand(options, positionals);
    case 'runner':
      return runnerCommand(options, positionals);
    case 'validate':
      return validateCommand(options, positionals);
    case 'run':
      return runCommand(options, positionals);
    case 'routes':
      return routesCommand(options, positionals);
    case 'token':
      return tokenCommand(options, positionals);
    case 'admin':
      return adminCommand(options, positionals);
    default:
      return initCommand(options, positionals);
  }
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
