import { parseArgs } from 'node:util';

/** Options every command accepts. */
export interface CliOptions {
  config?: string;
  port?: string;
  method?: string;
  data?: string;
  runner?: string;
  deployment?: string;
  help?: boolean;
}

/** Parse a command's arguments; unknown options are errors. */
export function parseCommandArgs(argv: string[]): { options: CliOptions; positionals: string[] } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      config: { type: 'string', short: 'c' },
      port: { type: 'string', short: 'p' },
      method: { type: 'string', short: 'X' },
      data: { type: 'string', short: 'd' },
      runner: { type: 'string' },
      deployment: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  return { options: values as CliOptions, positionals };
}

export const USAGE = `sagaway — API gateway and saga engine

Usage:
  sagaway start    [--config FILE] [--port N]     gateway and every runner in one process
  sagaway gateway  --config FILE [--port N]      the gateway alone; reaches runners over NATS
  sagaway runner   --config FILE --runner NAME [--deployment ID] [--port N]
                                                  one replica of a runner deployment (health/metrics on --port)
  sagaway validate --config FILE                  check the file and every saga
  sagaway run      --config FILE [--method M] [--data JSON] PATH
                                                  run one saga in process, print its outcome

Exit codes: 0 success (run: SUCCESS or ACK), 1 failure (validate: errors; run: FAIL or TIMEOUT),
2 configuration or usage error.`;
