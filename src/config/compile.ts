import { isForbiddenKey } from '../core/path.js';
import { apiOverlaps } from './api-overlap.js';
import { checkGateway, compileGateway } from './compile-gateway.js';
import { compileRunner } from './compile-runner.js';
import { compileSecrets, compileState, compileSystem } from './compile-stores.js';
import type { Report } from './report.js';
import type { RawConfig, RawState, RawSystem } from './schema.js';
import type { RunnerSettings, SagaDefinition, Settings, StateSettings, SystemSettings } from './settings.js';

export type { Report } from './report.js';

/**
 * The compile stage: a validated configuration becomes frozen settings with every default
 * filled in (each section in its own file: compile-gateway, compile-runner, compile-stores),
 * and every issue that needs more than one section (a runner an API names, a state a journal
 * names) reported at its place.
 */

/** Compile a validated config (sagas already loaded into `sagasByRunner`) into frozen settings. */
export function compileSettings(
  raw: RawConfig,
  file: string,
  baseDir: string,
  sagasByRunner: ReadonlyMap<string, SagaDefinition[]>,
  report: Report,
): Settings {
  const at = (...path: (string | number)[]) => path;
  const systems: Record<string, SystemSettings> = { local: { type: 'local', name: 'local' } };
  for (const [name, sys] of Object.entries(raw.systems ?? {})) systems[name] = compileSystem(name, sys as RawSystem);
  if (raw.defaultSystem !== undefined && !systems[raw.defaultSystem]) {
    report(file, at('defaultSystem'), `unknown system "${raw.defaultSystem}"`);
  }
  const states: Record<string, StateSettings> = {};
  for (const [alias, st] of Object.entries(raw.states ?? {})) {
    const compiled = compileState(alias, st as RawState, baseDir);
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(compiled.type === 'memory' ? 'ok' : compiled.table)) {
      report(file, at('states', alias), 'the alias is not a valid table name: set `table`');
    }
    states[alias] = compiled;
  }
  const gateway = compileGateway(raw, baseDir);
  const runners: Record<string, RunnerSettings> = {};
  for (const [name, r] of Object.entries(raw.runners ?? {})) {
    const sagas = sagasByRunner.get(name) ?? [];
    runners[name] = compileRunner(name, r, raw, systems, baseDir, sagas, file, report, gateway.limits.timeoutMs);
  }
  gateway.apis.forEach((api, i) => {
    if (!runners[api.runner]) report(file, at('gateway', 'apis', i, 'runner'), `unknown runner "${api.runner}"`);
  });
  for (const [i, message] of apiOverlaps(gateway.apis)) {
    const api = gateway.apis[i]!;
    report(file, at('gateway', 'apis', i, ...(api.methods ? ['methods'] : ['path'])), message);
  }
  const keyState = gateway.idempotency.state;
  if (keyState !== undefined && !states[keyState]) {
    report(file, at('gateway', 'idempotency', 'state'), `unknown state "${keyState}"`);
  }
  checkGateway(raw, gateway, (path, message, severity) => report(file, ['gateway', ...path], message, severity));
  const values: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw.values ?? {})) if (!isForbiddenKey(k)) values[k] = String(v);
  return deepFreeze({
    file,
    baseDir,
    gateway,
    systems,
    ...(raw.defaultSystem !== undefined ? { defaultSystem: raw.defaultSystem } : {}),
    states,
    values,
    secrets: compileSecrets(raw, baseDir),
    runners,
    ...(raw.observability ? { observability: { ...raw.observability } } : {}),
  });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
