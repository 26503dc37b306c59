import { randomUUID } from 'node:crypto';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import type { RawConfig } from '../config/schema.js';
import type { Settings } from '../config/settings.js';
import { loadConfig } from '../config/load.js';
import type { Logger } from '../core/logger.js';
import { silentLogger } from '../core/logger.js';
import type { Principal, SagaResult } from '../core/types.js';
import { BUILTIN_HANDLERS } from '../handlers/index.js';
import { checkHandlers } from '../runner/check-handlers.js';
import { Host } from '../runner/host.js';
import { OutputChecks } from '../config/output-check.js';
import { inputFailures } from '../config/input-check.js';
import type { SecretSource } from '../runner/executor/secrets.js';
import { createState } from '../states/index.js';
import { createCluster } from '../systems/index.js';
import { checkSignalHomes, withEmbeddedJournal } from '../runner/waits/check.js'; // waits:
import { callerKey } from '../core/caller.js';
import type { AnyRunStatus } from '../core/messages.js';
import type { Duration } from '../core/units.js';
import { TestClock } from './clock.js';

export { TestClock, testClock } from './clock.js';

/**
 * A public test kit: write a configuration (object or YAML text) and any files it names (saga
 * files, handler modules) into a temporary folder, load it exactly as `sagaway start` would, and
 * run sagas in process.
 */
export interface TestHostOptions {
  /** extra files relative to the config's folder: saga YAML, handler modules (.mjs) */
  files?: Record<string, string>;
  env?: NodeJS.ProcessEnv;
  log?: Logger;
  secrets?: SecretSource;
  /**
   * waits: the clock of wait steps, their pollers and callback links (default the real one). A
   * `testClock()` stands still until `advance` moves it: a 72 h timeout falls due in a millisecond.
   */
  clock?: { now(): number };
}

/** What `TestHost.advance` did: the waits it resumed, and the runs that ended meanwhile by run id. */
export interface Advanced {
  resumed: number;
  ended: Map<string, SagaResult>;
}

/** A started test host. */
export interface TestHost {
  settings: Settings;
  host: Host;
  dir: string;
  /**
   * run the saga serving `path` on `runner` (default: the only runner), as the gateway would: an
   * input off the saga's inputSchema is FAIL 400 INVALID_INPUT (nothing runs); a SUCCESS whose response
   * does not match the saga's outputSchema comes back FAIL 500 INVALID_OUTPUT, its message listing
   * the failures (pointer and message)
   */
  run(path: string, options?: RunOptions): Promise<SagaResult>;
  /**
   * waits: move the host's `testClock()` by `by` (`72h`, ms) and resume what is due then (timers,
   * timeouts, waits already decided); resolves once those runs ended or parked again. Throws
   * when the host was not started with a TestClock.
   */
  advance(by: Duration): Promise<Advanced>;
  /** waits: a journaled run's status (WAITING and what on, or DONE and its outcome) as `user` ran it */
  status(runId: string, user?: Principal | null): Promise<AnyRunStatus | undefined>;
  close(): Promise<void>;
}

export interface RunOptions {
  method?: string;
  input?: Record<string, unknown>;
  query?: Record<string, unknown>;
  user?: Principal | null;
  runner?: string;
  deadline?: number;
  signal?: AbortSignal;
}

/**
 * Start a host from a configuration file where it is (a project's own `sagaway.yaml`, whose
 * handler modules import `sagaway` from the project's node_modules). `options.env` replaces the
 * environment that `${env:...}` reads, e.g. to point a SQLite state at `:memory:`. `files` is
 * not used; close() leaves the folder alone.
 */
export async function loadTestHost(
  file: string | URL,
  options: Omit<TestHostOptions, 'files'> = {},
): Promise<TestHost> {
  const path = typeof file === 'string' ? resolve(file) : fileURLToPath(file);
  return hostFor(path, dirname(path), options, async () => undefined);
}

/** Start a host from a configuration; close() removes the temporary folder. */
export async function startTestHost(config: RawConfig | string, options: TestHostOptions = {}): Promise<TestHost> {
  const dir = await mkdtemp(join(tmpdir(), 'sagaway-test-'));
  try {
    for (const [name, text] of Object.entries(options.files ?? {})) {
      await mkdir(dirname(join(dir, name)), { recursive: true });
      await writeFile(join(dir, name), text);
    }
    const file = join(dir, 'sagaway.yaml');
    await writeFile(file, typeof config === 'string' ? config : stringify(config));
    return await hostFor(file, dir, options, () => rm(dir, { recursive: true, force: true }));
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}

/** Load `file`, start its host, and wrap it; `cleanup` runs after the host closed. */
async function hostFor(
  file: string,
  dir: string,
  options: Omit<TestHostOptions, 'files'>,
  cleanup: () => Promise<void>,
): Promise<TestHost> {
  const { settings: loaded } = await loadConfig(file, {
    ...(options.env ? { env: options.env } : {}),
    check: (s, report) => {
      checkSignalHomes(s, report); // waits: a kept signal's store must be the one its waits park in
      return checkHandlers(s, BUILTIN_HANDLERS, report);
    },
  });
  const settings = withEmbeddedJournal(loaded); // waits: as `sagaway start` runs it
  const host = await Host.start({
    settings,
    log: options.log ?? silentLogger(),
    builtins: BUILTIN_HANDLERS,
    createState,
    createCluster,
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.clock ? { waitClock: options.clock } : {}), // waits:
  });
  const outputs = new OutputChecks(settings.runners);
  return {
    settings,
    host,
    dir,
    async run(path, o = {}) {
      const runner = o.runner ?? (Object.keys(settings.runners)[0] as string);
      const method = o.method ?? 'GET';
      const input = o.input ?? {};
      // As the gateway does: an input off the saga's inputSchema runs nothing.
      const refused = settings.runners[runner] && inputFailures(settings.runners[runner], method, path, input);
      if (refused) {
        const listed = refused.failures.map((f) => `${f.pointer || '/'} ${f.message}`).join('; ');
        const message = `the input does not match the inputSchema of saga "${refused.saga}": ${listed}`;
        return { outcome: 'FAIL', http: 400, error: { code: 'INVALID_INPUT', message, http: 400 } };
      }
      const id = randomUUID(); // the run id is the request id, as the gateway makes it (status(runId) finds it)
      const result = await host.run(runner, {
        method,
        path,
        input,
        query: o.query ?? {},
        requestId: id,
        runId: id,
        user: o.user ?? null,
        ...(o.deadline !== undefined ? { deadline: o.deadline } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
      });
      // As the gateway with validateResponses answers: a response off its outputSchema is INVALID_OUTPUT.
      const checked = outputs.check(runner, method, path, result);
      if (checked.failures === undefined) return checked.result;
      const listed = checked.failures.map((f) => `${f.pointer || '/'} ${f.message}`).join('; ');
      return {
        ...checked.result,
        error: { ...checked.result.error!, message: `${checked.result.error!.message}: ${listed}` },
      };
    },
    async advance(by) {
      const clock = options.clock;
      if (!(clock instanceof TestClock)) throw new Error('advance needs a host started with { clock: testClock() }');
      clock.advance(by);
      const ended = new Map<string, SagaResult>();
      const off = host.waits.onEnded((runId, result) => ended.set(runId, result));
      try {
        return { resumed: await host.waits.poll(), ended };
      } finally {
        off();
      }
    },
    status(runId, user = null) {
      return host.statusReader().lookup(callerKey(user, 'local'), runId);
    },
    async close() {
      await host.close();
      await cleanup();
    },
  };
}
