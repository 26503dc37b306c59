import { randomUUID } from 'node:crypto';
import { SagawayError, type ErrorInfo } from '../core/errors.js';
import { createLogger } from '../core/logger.js';
import { isForbiddenKey, isObject } from '../core/path.js';
import { ApiMap } from '../gateway/apis/api-map.js';
import { BUILTIN_HANDLERS } from '../handlers/index.js';
import { Host } from '../runner/host.js';
import { OutputChecks } from '../config/output-check.js';
import { inputFailures } from '../config/input-check.js';
import { createState } from '../states/index.js';
import { createCluster } from '../systems/index.js';
import type { Principal } from '../core/types.js';
import { parseRoles, type CliOptions } from './args.js';
import { configPath, loadChecked } from './load.js';
import { advanceRun, parseAdvances, runClock, throwawayJournal } from './run-waits.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * `sagaway run [--config FILE] [--method M] [--data JSON] [--user SUB --roles a,b] PATH`: run
 * one saga in process and print `{"outcome","http","response","error"}` on stdout (DESIGN §9).
 * An input off the saga's inputSchema is FAIL 400 INVALID_INPUT (nothing runs), as at the
 * gateway. A response that does not match the saga's outputSchema adds `error` INVALID_OUTPUT with its
 * `errors` (pointer, message) and exits 1.
 * Logs go to stderr. `run FILE PATH` is accepted for `run --config FILE PATH`. A run that parks
 * on a wait step goes on when `--advance` moves the waits' clock past what it waits for
 * (run-waits.ts); else it is printed WAITING.
 */
export async function runCommand(options: CliOptions, positionals: string[]): Promise<number> {
  let config = options.config;
  if (positionals.length === 2 && config === undefined && /\.(?:ya?ml|json)$/i.test(positionals[0]!)) {
    config = positionals.shift();
  }
  const target = positionals[0];
  if (!target || positionals.length > 1) {
    throw new SagawayError(
      'VALIDATION_FAILED',
      `run needs one PATH, got ${positionals.length}: sagaway run [--config FILE] PATH (see sagaway run --help)`,
    );
  }
  const user = principal(options);
  const file = configPath(config, false);
  if (!file) throw new SagawayError('VALIDATION_FAILED', 'no --config given and no ./sagaway.yaml here');
  const clock = runClock(options.clock);
  const advances = parseAdvances(options.advance);
  const { settings: loaded } = await loadChecked(file);
  const method = (options.method ?? 'GET').toUpperCase();
  const url = new URL(target, 'http://sagaway.invalid');
  const query = queryObject(url.searchParams);
  let input: Record<string, unknown> = query;
  if (BODY_METHODS.has(method)) {
    let body: unknown = {};
    if (options.data !== undefined) {
      try {
        body = JSON.parse(options.data);
      } catch {
        throw new SagawayError('INVALID_JSON', '--data is not valid JSON');
      }
    }
    if (!isObject(body)) throw new SagawayError('INVALID_BODY', '--data must be a JSON object');
    input = body;
  }
  const log = createLogger({ fd: 2 });
  // waits: a temporary journal and a clock that --advance moves (run-waits.ts)
  const { settings, cleanup } = await throwawayJournal(loaded);
  let host: Host;
  try {
    host = await Host.start({
      settings,
      log,
      builtins: BUILTIN_HANDLERS,
      createState,
      createCluster,
      waitClock: clock,
    });
  } catch (e) {
    await cleanup();
    throw e;
  }
  try {
    // Events on nats streams need the broker: give it a moment (they answer 503 without it).
    if (!(await host.systemsConnected(5000))) log.warn('NATS not reachable; events on nats streams will fail');
    const path = decodePath(url.pathname);
    const runner = pickRunner(host, settings.gateway.apis, path, method);
    if (!runner) throw new SagawayError('NOT_FOUND', `no runner serves ${path}`);
    // As the gateway does: an input off the saga's inputSchema runs nothing (400 INVALID_INPUT).
    const refused = inputFailures(settings.runners[runner]!, method, path, input);
    if (refused) {
      const message = `the input does not match the inputSchema of saga "${refused.saga}"`;
      const error = { code: 'INVALID_INPUT', message, http: 400, errors: refused.failures };
      process.stdout.write(`${JSON.stringify({ outcome: 'FAIL', http: 400, error })}\n`);
      return 1;
    }
    // the run id is the request id, as the gateway makes it for a one-shot request
    const id = randomUUID();
    const first = await host.run(runner, { method, path, input, query, requestId: id, runId: id, user });
    const result = await advanceRun(host, clock, first, user, advances);
    // The response is still printed when it does not match the outputSchema: it is what to fix.
    const { failures, result: checked } = new OutputChecks(settings.runners).check(runner, method, path, result);
    const error = failures
      ? { ...publicError(checked.error!), errors: failures }
      : result.error && publicError(result.error);
    const out = {
      outcome: result.outcome,
      http: result.http,
      response: result.response,
      ...(error ? { error } : {}),
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return (result.outcome === 'SUCCESS' || result.outcome === 'ACK') && !failures ? 0 : 1;
  } finally {
    await host.close();
    await cleanup();
    log.flush();
  }
}

/** The user of `--user SUB --roles a,b`, as the gateway would make it from a token; else anonymous. */
function principal(options: CliOptions): Principal | null {
  if (options.user === undefined) {
    if (options.roles !== undefined) throw new SagawayError('VALIDATION_FAILED', '--roles needs --user SUB');
    return null;
  }
  if (options.user.trim() === '') throw new SagawayError('VALIDATION_FAILED', '--user needs a subject');
  const roles = parseRoles(options.roles);
  return { sub: options.user, roles, claims: { sub: options.user, roles }, anonymous: false };
}

/** Decode each segment once, as the gateway does; an encoded `/` inside a segment is refused. */
function decodePath(raw: string): string {
  const segments = raw.split('/').filter((s) => s !== '');
  const decoded = segments.map((s) => {
    let d: string;
    try {
      d = decodeURIComponent(s);
    } catch {
      throw new SagawayError('NOT_FOUND', `malformed path ${raw}`);
    }
    if (d.includes('/')) throw new SagawayError('NOT_FOUND', `malformed path ${raw}`);
    return d;
  });
  return `/${decoded.join('/')}`;
}

/**
 * The error as printed: code, message, http, the wrapped step error (UNHANDLED_STEP_FAILURE) and
 * whether the failed saga's compensations all ran (issue 12).
 */
function publicError(e: ErrorInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { code: e.code, message: e.message, http: e.http };
  if (e.cause) out['cause'] = { code: e.cause.code, message: e.cause.message, http: e.cause.http };
  if (e.compensation) out['compensation'] = e.compensation;
  return out;
}

function queryObject(params: URLSearchParams): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of params) {
    if (isForbiddenKey(k)) continue;
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/** The runner for a path: the gateway's API mapping, else the one runner whose sagas serve it. */
function pickRunner(
  host: Host,
  apis: ConstructorParameters<typeof ApiMap>[0],
  path: string,
  method: string,
): string | undefined {
  const api = new ApiMap(apis).match(
    path.split('/').filter((s) => s !== ''),
    method,
  );
  if (api) return api.settings.runner;
  for (const [name, runner] of host.runners) if (runner.serves(path)) return name;
  return undefined;
}
