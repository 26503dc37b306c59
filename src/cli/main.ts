#!/usr/bin/env node
import { ConfigError, formatIssue, SagawayError } from '../core/errors.js';
import { parseCommandArgs, USAGE } from './args.js';
import { gatewayCommand } from './gateway.js';
import { runCommand } from './run.js';
import { runnerCommand } from './runner.js';
import { startCommand } from './start.js';
import { validateCommand } from './validate.js';

/** Entry point of the `sagaway` executable. Errors are printed as one line each, never a stack. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 2;
  }
  const { options, positionals } = parseCommandArgs(rest);
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  switch (command) {
    case 'start':
      return startCommand(options);
    case 'gateway':
      return gatewayCommand(options);
    case 'runner':
      return runnerCommand(options);
    case 'validate':
      return validateCommand(options);
    case 'run':
      return runCommand(options, positionals);
    default:
      process.stderr.write(`unknown command "${command}"\n\n${USAGE}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof ConfigError) {
      for (const issue of err.issues) process.stderr.write(`${formatIssue(issue)}\n`);
      // validate reports a broken file with 1; the other commands cannot start: 2 (DESIGN §9).
      process.exitCode = process.argv[2] === 'validate' ? 1 : 2;
    } else if (err instanceof SagawayError) {
      process.stderr.write(`sagaway: ${err.code}: ${err.message}\n`);
      process.exitCode = 2;
    } else if (err instanceof TypeError && (err as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`sagaway: ${err.message}\n\n${USAGE}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`sagaway: unexpected error: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 2;
    }
  },
);
