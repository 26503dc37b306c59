import type { RawEventMeta } from './schema.js';
import type { MetaLayers, StreamBindingSettings, StructuralActionSettings } from './settings.js';
import { isForbiddenKey, isObject } from '../core/path.js';
import { LAYER_FIELDS, isLayerField } from './layer-fields.js';

/**
 * Effective settings of an event on the runner that executes it (DESIGN §6.6).
 *
 * Order, lowest to highest:
 *   1. stream defaults      runners.R.streams.S.meta.<field>.default
 *   2. action defaults      runners.R.actions.ALIAS.meta.<field>.default
 *   3. the step's own values
 *   4. action overrides     runners.R.actions.ALIAS.meta.<field>.override (and the element's `handler`)
 *   5. stream overrides     runners.R.streams.S.meta.<field>.override
 * A default can be replaced by the step; an override cannot. Fields with dots reach into objects
 * (`parameters.url`); the step's `parameters` are applied key by key, so a step that sets
 * `parameters.limit` keeps a default `parameters.currency`.
 */

/** The settings the executing runner acts on. */
export interface EffectiveSettings {
  handler?: string;
  action: string;
  version: number;
  domain?: string;
  inputElement?: string;
  outputElement?: string;
  parameters: Record<string, unknown>;
  inject: boolean;
}

function applyLayer(
  target: Record<string, unknown>,
  layers: MetaLayers | undefined,
  which: 'default' | 'override',
): void {
  if (!layers) return;
  for (const key of Object.keys(layers)) {
    const layer = layers[key];
    if (!layer || !Object.hasOwn(layer, which) || !isLayerField(key)) continue;
    setDotted(target, key, layer[which]);
  }
}

function setDotted(target: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  let node = target;
  for (let i = 0; i < parts.length - 1; i++) {
    const part = parts[i] as string;
    const child = node[part];
    if (isObject(child)) node = child;
    else {
      const created: Record<string, unknown> = {};
      node[part] = created;
      node = created;
    }
  }
  node[parts[parts.length - 1] as string] = isObject(value) ? { ...value } : value;
}

function applyStep(target: Record<string, unknown>, meta: RawEventMeta): void {
  for (const field of LAYER_FIELDS) {
    const value = (meta as Record<string, unknown>)[field];
    if (value === undefined) continue;
    if (field === 'parameters' && isObject(value)) {
      for (const k of Object.keys(value)) if (!isForbiddenKey(k)) setDotted(target, `parameters.${k}`, value[k]);
    } else {
      target[field] = value;
    }
  }
}

/**
 * The structural action a step names, if any: the step's `action`, unless the stream forces
 * another one with an `action` override.
 */
export function findStructuralAction(
  meta: RawEventMeta,
  binding: StreamBindingSettings | undefined,
  actions: Readonly<Record<string, StructuralActionSettings>>,
): StructuralActionSettings | undefined {
  const forced = binding?.meta['action']?.override;
  const name = typeof forced === 'string' ? forced : meta.action;
  return Object.hasOwn(actions, name) ? actions[name] : undefined;
}

/**
 * Effective settings depend only on configuration (the step's meta, the binding, the runner's
 * actions), all frozen at load, so they are merged once per (meta, binding) and reused. The
 * result is frozen: actions read ctx.parameters but cannot change what the next run sees.
 */
const cache = new WeakMap<RawEventMeta, Map<StreamBindingSettings | undefined, EffectiveSettings>>();

/** Merge the five layers into the settings the runner acts on (cached; the result is frozen). */
export function effectiveSettingsFor(
  meta: RawEventMeta,
  binding: StreamBindingSettings | undefined,
  actions: Readonly<Record<string, StructuralActionSettings>>,
): EffectiveSettings {
  if (!Object.isFrozen(meta)) return byText(meta, binding, actions);
  let byBinding = cache.get(meta);
  if (!byBinding) cache.set(meta, (byBinding = new Map()));
  let settings = byBinding.get(binding);
  if (!settings) byBinding.set(binding, (settings = deepFreeze(resolveEffectiveSettings(meta, binding, actions))));
  return settings;
}

/**
 * A meta that crossed NATS is a fresh object per event, so it is cached by its JSON text (per
 * binding and actions, which are frozen at load): merging the layers again for every remote
 * event was the executing runner's largest sagaway cost in issue 13's profile. Bounded: the
 * texts come from the orchestrators' saga steps, a few per stream; past MAX_TEXTS the cache
 * starts over rather than grow with whatever arrives.
 */
const textCache = new WeakMap<object, Map<StreamBindingSettings | undefined, Map<string, EffectiveSettings>>>();
const MAX_TEXTS = 256;

function byText(
  meta: RawEventMeta,
  binding: StreamBindingSettings | undefined,
  actions: Readonly<Record<string, StructuralActionSettings>>,
): EffectiveSettings {
  let byBinding = textCache.get(actions);
  if (!byBinding) textCache.set(actions, (byBinding = new Map()));
  let texts = byBinding.get(binding);
  if (!texts) byBinding.set(binding, (texts = new Map()));
  const key = JSON.stringify(meta);
  let settings = texts.get(key);
  if (!settings) {
    if (texts.size >= MAX_TEXTS) texts.clear();
    texts.set(key, (settings = deepFreeze(resolveEffectiveSettings(meta, binding, actions))));
  }
  return settings;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Merge the five layers into the settings the runner acts on. */
export function resolveEffectiveSettings(
  meta: RawEventMeta,
  binding: StreamBindingSettings | undefined,
  actions: Readonly<Record<string, StructuralActionSettings>>,
): EffectiveSettings {
  const structural = findStructuralAction(meta, binding, actions);
  const out: Record<string, unknown> = { parameters: {} };
  applyLayer(out, binding?.meta, 'default');
  applyLayer(out, structural?.meta, 'default');
  applyStep(out, meta);
  if (structural?.handler !== undefined) out['handler'] = structural.handler;
  applyLayer(out, structural?.meta, 'override');
  applyLayer(out, binding?.meta, 'override');
  if (out['handler'] === undefined && binding?.handler !== undefined) out['handler'] = binding.handler;
  if (!isObject(out['parameters'])) out['parameters'] = {};
  return {
    ...(typeof out['handler'] === 'string' ? { handler: out['handler'] } : {}),
    action: String(out['action']),
    version: Number(out['version']),
    ...(typeof out['domain'] === 'string' ? { domain: out['domain'] } : {}),
    ...(typeof out['inputElement'] === 'string' ? { inputElement: out['inputElement'] } : {}),
    ...(typeof out['outputElement'] === 'string' ? { outputElement: out['outputElement'] } : {}),
    parameters: out['parameters'] as Record<string, unknown>,
    inject: out['inject'] === true,
  };
}
