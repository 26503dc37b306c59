import type { Settings } from '../../config/settings.js';
import type { RawEventMeta } from '../../config/schema.js';
import { effectiveSettingsFor } from '../../config/effective-settings.js';
import type { CompiledSaga, CompiledStep } from '../../saga/graph.js';
import { FORM_PREFIX } from '../apis/saga-path.js';
import { routeReport } from '../apis/route-check.js';
import { firstExample } from '../apis/openapi-io.js';
import { layoutSaga, type SagaGraph } from './layout.js';
import { masked } from './mask.js';
import { compileMasker, type Masker } from '../../core/sensitive.js';

/**
 * What the console page shows about the configuration, built once at start: the API entries,
 * every saga of every runner with its graph laid out, and each step's settings (masked). It is
 * sent as one JSON document; the page draws it.
 */

export interface ConsoleApi {
  path: string;
  runner: string;
  methods: readonly string[] | null;
  /** `public`, or the roles required (empty = any authenticated caller) */
  auth: { public: true } | { public: false; roles: readonly string[] };
  request: string;
  stream: string;
}

export interface ConsoleSaga {
  runner: string;
  id: string;
  path: string;
  methods: readonly string[];
  /** the saga's own roles, checked on top of its API entry's auth */
  roles: readonly string[];
  /** the API entries that serve it, with the saga's methods each serves and that entry's auth */
  apis: { path: string; methods: readonly string[]; auth: ConsoleApi['auth'] }[];
  timeoutMs: number;
  autoFail: boolean;
  request: string;
  stream: string;
  graph: SagaGraph;
  /** step id -> what clicking the node shows */
  settings: Record<string, unknown>;
  /** the first of its inputSchema's `examples`, for try-it's body or query; absent = none */
  example?: unknown;
}

export interface ConsoleModel {
  apis: ConsoleApi[];
  sagas: ConsoleSaga[];
  runners: { name: string; deployment: string; journaled: boolean }[];
  openapi: string;
}

/** Build the model of a configuration. */
export function buildModel(settings: Settings): ConsoleModel {
  const authOf = (a: Settings['gateway']['apis'][number]): ConsoleApi['auth'] =>
    a.public ? { public: true } : { public: false, roles: a.roles };
  // `?? {}`: embedding programs and tests may hand over settings with a gateway block only
  const routes = routeReport({ ...settings, runners: settings.runners ?? {} }).sagas;
  const servedBy = (runner: string, id: string): ConsoleSaga['apis'] =>
    (routes.find((r) => r.runner === runner && r.saga.id === id)?.via ?? []).map((v) => {
      const a = settings.gateway.apis[v.api]!;
      return { path: a.path, methods: v.methods, auth: authOf(a) };
    });
  const apis = settings.gateway.apis.map((a): ConsoleApi => ({
    path: a.path,
    runner: a.runner,
    methods: a.methods ?? null,
    auth: authOf(a),
    request: FORM_PREFIX.request + (a.path === '/' ? '' : a.path),
    stream: FORM_PREFIX.stream + (a.path === '/' ? '' : a.path),
  }));
  const sagas = Object.values(settings.runners ?? {}).flatMap((runner) =>
    runner.plans.map((saga): ConsoleSaga => ({
      runner: runner.name,
      id: saga.id,
      path: saga.path,
      methods: saga.methods,
      roles: saga.roles,
      apis: servedBy(runner.name, saga.id),
      timeoutMs: saga.timeoutMs,
      autoFail: saga.autoFail,
      request: FORM_PREFIX.request + saga.path,
      stream: FORM_PREFIX.stream + saga.path,
      graph: layoutSaga(saga),
      settings: Object.fromEntries(
        [...saga.steps.values()].map((s) => [s.id, stepSettings(settings, runner.name, saga, s)]),
      ),
      ...firstExample(saga.raw.inputSchema),
    })),
  );
  const runners = Object.values(settings.runners ?? {}).map((r) => ({
    name: r.name,
    deployment: r.deployment,
    journaled: r.journal !== undefined,
  }));
  return { apis, sagas, runners, openapi: '/api/openapi.json' };
}

/** What clicking a step shows: its own settings, and for an event step the effective ones per executing runner. */
function stepSettings(settings: Settings, runner: string, saga: CompiledSaga, step: CompiledStep): unknown {
  const raw = step.raw;
  const common = {
    type: step.type,
    ...(raw.name !== undefined ? { name: raw.name } : {}),
    ...(raw.description !== undefined ? { description: raw.description } : {}),
    autoFail: step.autoFail ?? saga.autoFail,
  };
  switch (step.type) {
    case 'event':
      return {
        ...common,
        eventMeta: masked(raw.eventMeta, maskerOf(settings)),
        ...(raw.retry !== undefined ? { retry: raw.retry } : {}),
        // The undo as written (its eventMeta masked like the step's), and the pivot that ends undoing.
        ...(typeof raw.compensate === 'object' ? { compensate: masked(raw.compensate, maskerOf(settings)) } : {}),
        ...(raw.pivot === true ? { pivot: true } : {}),
        effective: effectiveFor(settings, runner, step.meta.raw),
      };
    case 'transform':
      return {
        ...common,
        expression: raw.expression,
        ...(raw.outputElement ? { outputElement: raw.outputElement } : {}),
      };
    case 'condition':
      return { ...common, expression: raw.expression };
    case 'success':
      return { ...common, http: step.http, ...(raw.outputElement ? { outputElement: raw.outputElement } : {}) };
    case 'fail':
      return {
        ...common,
        ...(step.error ? { error: step.error } : {}),
        ...(step.compensate ? {} : { compensate: false }),
      };
    case 'wait': // waits: what the step waits for (never the signal schema's contents beyond its shape)
      return { ...common, wait: waitSummary(raw) };
    default:
      return common;
  }
}

/**
 * The effective eventMeta (DESIGN §6.6) on each runner that executes the event: the orchestrating
 * runner for `local`, else every runner of this configuration that consumes the stream on its system.
 */
function effectiveFor(settings: Settings, orchestrator: string, meta: RawEventMeta): unknown[] {
  const stream = meta.stream ?? 'local';
  const targets: { runner: string; binding: Settings['runners'][string]['streams'][string] | undefined }[] = [];
  if (stream === 'local') {
    targets.push({ runner: orchestrator, binding: undefined });
  } else {
    const system = meta.system ?? settings.defaultSystem ?? 'local';
    for (const r of Object.values(settings.runners ?? {})) {
      const binding = Object.hasOwn(r.streams, stream) ? r.streams[stream] : undefined;
      if (binding && binding.system === system) targets.push({ runner: r.name, binding });
    }
  }
  return targets.map(({ runner, binding }) => {
    const r = settings.runners[runner];
    const effective = r ? effectiveSettingsFor(meta, binding, r.actions) : undefined;
    return {
      runner,
      deployment: r?.deployment,
      stream,
      ...(effective ? { settings: masked(effective, maskerOf(settings)) } : {}),
    };
  });
}

/** The masker of a configuration's `gateway.console.mask`, compiled once per settings object. */
const maskers = new WeakMap<Settings, Masker>();
function maskerOf(settings: Settings): Masker {
  let masker = maskers.get(settings);
  if (masker === undefined) maskers.set(settings, (masker = compileMasker(settings.gateway.console.mask)));
  return masker;
}

/** waits: a wait step as the console shows it (issue 21). */
function waitSummary(raw: CompiledStep['raw']): Record<string, unknown> {
  return {
    ...(raw.for !== undefined ? { for: raw.for } : {}),
    ...(raw.until !== undefined ? { until: raw.until } : {}),
    ...(raw.signal !== undefined
      ? { signal: { name: raw.signal.name, key: raw.signal.key, roles: raw.signal.roles ?? [] } }
      : {}),
    ...(raw.approvals !== undefined ? { approvals: raw.approvals } : {}),
    ...(raw.timeout !== undefined ? { timeout: raw.timeout } : {}),
    ...(raw.notify !== undefined
      ? { notify: { handler: raw.notify.eventMeta.handler, action: raw.notify.eventMeta.action } }
      : {}),
  };
}
