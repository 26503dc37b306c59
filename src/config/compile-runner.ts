import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_MAX_RUNS_PER_REQUEST } from '../core/lineage.js';
import { parseDuration, parseSize } from '../core/units.js';
import { compileSagaPlan } from '../saga/compile.js';
import { eventMetasOf, type CompiledSaga } from '../saga/graph.js';
import { isLayerField } from './layer-fields.js';
import type { Report } from './report.js';
import type { RawConfig, RawEventMeta, RawRunner } from './schema.js';
import type {
  RunnerSettings,
  SagaDefinition,
  StreamBindingSettings,
  StructuralActionSettings,
  SystemSettings,
} from './settings.js';

/** `runners.<name>` with its documented defaults, and the checks of its sagas (docs/configuration.md). */

/** Handler names that are built in (DESIGN §2); anything else in `handlers` is a module path. */
export const BUILTIN_HANDLER_NAMES: ReadonlySet<string> = new Set([
  'read',
  'write',
  'query',
  'rest',
  'action',
  'task',
  'saga',
]);

const ms = (v: unknown, fallback: number) => parseDuration(v) ?? fallback;
/** Upper bound of runners.R.statusMaxSize: NATS' default max_payload. */
const MAX_STATUS_BYTES = 1024 * 1024;
/** How long a finished run stays in the journal unless `journalRetention` says otherwise: 7 days. */
export const DEFAULT_JOURNAL_RETENTION_MS = 7 * 24 * 3600_000;
/** How long an outcome stays readable at /api/status without a journal unless `statusTtl` says otherwise: 24 h. */
export const DEFAULT_STATUS_TTL_MS = 24 * 3600_000;
/** The largest outcome kept for /api/status without a journal unless `statusMaxSize` says otherwise: 64 KiB. */
export const DEFAULT_STATUS_MAX_BYTES = 64 * 1024;
/** How often journaled runs whose process is gone are looked for unless `resumeInterval` says otherwise. */
export const DEFAULT_RESUME_INTERVAL_MS = 5000;
/** How often due or decided waits are looked for unless `waitPoll` says otherwise. */
export const DEFAULT_WAIT_POLL_MS = 1000;
/** How long a taken wait is held unless `waitLease` says otherwise. */
export const DEFAULT_WAIT_LEASE_MS = 30_000;

export function compileRunner(
  name: string,
  r: RawRunner,
  raw: RawConfig,
  systems: Record<string, SystemSettings>,
  baseDir: string,
  sagas: SagaDefinition[],
  file: string,
  report: Report,
  defaultTimeoutMs: number,
): RunnerSettings {
  const handlers = (r.handlers ?? []).map((h, i) => {
    if (BUILTIN_HANDLER_NAMES.has(h)) return h;
    const abs = resolve(baseDir, h);
    if (!existsSync(abs)) report(file, ['runners', name, 'handlers', i], `handler module not found: ${h}`);
    return abs;
  });
  const actions: Record<string, StructuralActionSettings> = {};
  for (const [alias, a] of Object.entries(r.actions ?? {})) {
    for (const key of Object.keys(a.meta ?? {})) {
      if (!isLayerField(key)) {
        report(
          file,
          ['runners', name, 'actions', alias, 'meta', key],
          `"${key}" is not a setting actions may default or override`,
        );
      }
    }
    actions[alias] = { alias, ...(a.handler !== undefined ? { handler: a.handler } : {}), meta: a.meta ?? {} };
  }
  const streams: Record<string, StreamBindingSettings> = {};
  for (const [s, b] of Object.entries(r.streams ?? {})) {
    const system = b.system ?? raw.defaultSystem ?? 'local';
    if (!systems[system]) report(file, ['runners', name, 'streams', s, 'system'], `unknown system "${system}"`);
    for (const key of Object.keys(b.meta ?? {})) {
      if (!isLayerField(key)) {
        report(
          file,
          ['runners', name, 'streams', s, 'meta', key],
          `"${key}" is not a setting streams may default or override`,
        );
      }
    }
    streams[s] = { name: s, ...(b.handler !== undefined ? { handler: b.handler } : {}), system, meta: b.meta ?? {} };
  }
  const runner: RunnerSettings = {
    name,
    deployment: r.deployment ?? '1',
    handlers,
    sagas,
    plans: [],
    actions,
    streams,
    statusTtlMs: ms(r.statusTtl, DEFAULT_STATUS_TTL_MS),
    statusMaxBytes: Math.min(MAX_STATUS_BYTES, Math.max(1024, parseSize(r.statusMaxSize) ?? DEFAULT_STATUS_MAX_BYTES)),
    maxSteps: r.maxSteps ?? 1000,
    maxRunsPerRequest: r.maxRunsPerRequest ?? DEFAULT_MAX_RUNS_PER_REQUEST,
    ...(r.journal !== undefined ? { journal: r.journal } : {}),
    journalRetentionMs: ms(r.journalRetention, DEFAULT_JOURNAL_RETENTION_MS),
    resumeIntervalMs: ms(r.resumeInterval, DEFAULT_RESUME_INTERVAL_MS),
    waitPollMs: ms(r.waitPoll, DEFAULT_WAIT_POLL_MS),
    waitLeaseMs: ms(r.waitLease, DEFAULT_WAIT_LEASE_MS),
  };
  if (r.journal !== undefined && !Object.hasOwn(raw.states ?? {}, r.journal)) {
    report(file, ['runners', name, 'journal'], `unknown state "${r.journal}"`);
  }
  return { ...runner, plans: checkRunnerSagas(runner, raw, systems, report, defaultTimeoutMs) };
}

/**
 * One compile pass per saga (saga/compile.ts: its issues and, without errors, its frozen plan),
 * and the event-step rules that need the runner around them (a configuration with errors is
 * refused by the loader, so no runner ever sees a partial list).
 */
function checkRunnerSagas(
  runner: RunnerSettings,
  raw: RawConfig,
  systems: Record<string, SystemSettings>,
  report: Report,
  defaultTimeoutMs: number,
): CompiledSaga[] {
  const plans: CompiledSaga[] = [];
  const ids = new Map<string, SagaDefinition>();
  for (const saga of runner.sagas) {
    const where = (...p: (string | number)[]) => [...saga.source.at, ...p];
    if (ids.has(saga.id))
      report(saga.source.file, where('id'), `duplicate saga id "${saga.id}" in runner "${runner.name}"`);
    ids.set(saga.id, saga);
    const { plan, issues } = compileSagaPlan(saga, defaultTimeoutMs);
    for (const issue of issues) report(saga.source.file, where(...issue.at), issue.message, issue.severity);
    saga.steps.forEach((step, i) => {
      for (const { meta, at } of eventMetasOf(step)) {
        checkEventMeta(meta, runner, raw, systems, (p, m) =>
          report(saga.source.file, where('steps', i, ...at, ...p), m),
        );
      }
    });
    if (plan) plans.push(plan);
  }
  // onFail names a saga of the same runner (checked once every id is known).
  for (const saga of runner.sagas) {
    const target = saga.onFail?.saga;
    if (target !== undefined && !ids.has(target))
      report(saga.source.file, [...saga.source.at, 'onFail', 'saga'], `no saga "${target}" in runner "${runner.name}"`);
  }
  return plans;
}

function checkEventMeta(
  meta: RawEventMeta,
  runner: RunnerSettings,
  raw: RawConfig,
  systems: Record<string, SystemSettings>,
  report: (at: (string | number)[], message: string) => void,
): void {
  const stream = meta.stream ?? 'local';
  if (stream !== 'local') {
    const system = meta.system ?? raw.defaultSystem ?? 'local';
    if (!systems[system]) report(['system'], `unknown system "${system}"`);
    return;
  }
  // DESIGN §6.1: on `local` the handler must be explicit (a structural action may supply it).
  const structural = Object.hasOwn(runner.actions, meta.action) ? runner.actions[meta.action] : undefined;
  const handler =
    meta.handler ??
    structural?.handler ??
    (structural?.meta['handler']?.override as string | undefined) ??
    (structural?.meta['handler']?.default as string | undefined);
  if (handler === undefined) {
    report(['handler'], 'required when stream is local (HANDLER_REQUIRED)');
    return;
  }
  if (BUILTIN_HANDLER_NAMES.has(handler) && !runner.handlers.includes(handler)) {
    report(['handler'], `handler "${handler}" is not listed in runners.${runner.name}.handlers`);
  }
}
