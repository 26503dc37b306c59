import { dirname } from 'node:path';
import { compileSettings } from '../config/compile.js';
import type { RawConfig } from '../config/schema.js';
import type {
  AuthSettings,
  ConsoleSettings,
  GatewaySettings,
  IdempotencySettings,
  LimitSettings,
  RunnerSettings,
  SagaDefinition,
  Settings,
  StreamSettings,
} from '../config/settings.js';

/**
 * Settings for tests, made by the real compile stage (config/compile.ts) so that every default
 * has one home: `settingsFor(config, overrides)` compiles `config` (a configuration object as a
 * file holds it, inline sagas included: they are checked and planned like the loader's) and then
 * lays `overrides`, in compiled form (milliseconds, bytes), over the result. A configuration
 * with errors throws, with each issue and where it is.
 */

/** Gateway settings to lay over the compiled ones; nested blocks may be partial. */
export type GatewayOverrides = Partial<
  Omit<GatewaySettings, 'auth' | 'stream' | 'limits' | 'idempotency' | 'console'>
> & {
  auth?: Partial<AuthSettings>;
  stream?: Partial<StreamSettings>;
  limits?: Partial<LimitSettings>;
  idempotency?: Partial<IdempotencySettings>;
  console?: Partial<ConsoleSettings>;
};

/** A runner's settings to lay over the compiled ones (its sagas belong in the configuration, to be compiled). */
export type RunnerOverrides = Partial<Omit<RunnerSettings, 'name' | 'sagas' | 'plans'>>;

/** Compiled settings to lay over those of the configuration. */
export type SettingsOverrides = Partial<Omit<Settings, 'gateway' | 'runners'>> & {
  gateway?: GatewayOverrides;
  /** a runner the configuration does not name starts from a runner's defaults */
  runners?: Record<string, RunnerOverrides>;
};

/** The configuration file the settings claim to come from, unless `overrides.file` names one. */
const TEST_FILE = '/tmp/sagaway-test.yaml';

/** Compiled settings of `config` with `overrides` laid over them (see the top of this file). */
export function settingsFor(config: RawConfig = {}, overrides: SettingsOverrides = {}): Settings {
  const { gateway: g = {}, runners: runnerOverrides = {}, systems, states, ...rest } = overrides;
  const file = rest.file ?? TEST_FILE;
  const baseDir = rest.baseDir ?? dirname(file);
  const raw: RawConfig = { ...config, runners: { ...config.runners } };
  for (const name of Object.keys(runnerOverrides)) raw.runners![name] ??= {};
  const sagas = new Map<string, SagaDefinition[]>();
  for (const [name, runner] of Object.entries(raw.runners!)) {
    sagas.set(
      name,
      (runner.sagas ?? []).map((entry, i) => {
        if (typeof entry === 'string') throw new Error(`settingsFor: runners.${name}.sagas[${i}]: no files here`);
        const at = ['runners', name, 'sagas', i];
        return { source: { file, at }, ...entry };
      }),
    );
  }
  const errors: string[] = [];
  const base = compileSettings(raw, file, baseDir, sagas, (_file, at, message, severity = 'error') => {
    if (severity === 'error') errors.push(`${at.join('.')}: ${message}`);
  });
  if (errors.length > 0) throw new Error(`settingsFor: ${errors.join('; ')}`);
  const runners: Record<string, RunnerSettings> = { ...base.runners };
  for (const [name, over] of Object.entries(runnerOverrides)) runners[name] = { ...base.runners[name]!, ...over };
  return {
    ...base,
    ...rest,
    systems: { ...base.systems, ...systems },
    states: { ...base.states, ...states },
    gateway: {
      ...base.gateway,
      ...g,
      auth: { ...base.gateway.auth, ...g.auth },
      stream: { ...base.gateway.stream, ...g.stream },
      limits: { ...base.gateway.limits, ...g.limits },
      idempotency: { ...base.gateway.idempotency, ...g.idempotency },
      console: { ...base.gateway.console, ...g.console },
    },
    runners,
  };
}

/** The compiled settings of one runner (named `name`, default `main`) of `config`, with `overrides` laid over them. */
export function runnerSettingsFor(
  runner: NonNullable<RawConfig['runners']>[string] = {},
  overrides: RunnerOverrides = {},
  name = 'main',
): RunnerSettings {
  return settingsFor({ runners: { [name]: runner } }, { runners: { [name]: overrides } }).runners[name]!;
}
