import type { ErrorObject } from 'ajv';
import type { ConfigIssue } from '../core/errors.js';
import * as validators from './validators.generated.js';
import type { YamlSource } from './yaml-source.js';

/**
 * JSON Schema validation of the configuration and of saga files, with each error turned into a
 * located issue `FILE:LINE:COL PATH: message` (DESIGN §3). The validators are compiled from
 * the schema at build time (write-validators.ts), not here.
 */

type Seg = string | number;

/** Render a path as `runners.todo.sagas[2].steps[4]`. */
export function formatPath(path: readonly Seg[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** Validate a whole config value; `data` may be changed in place (type coercion). */
export function validateConfig(data: unknown, source: YamlSource): ConfigIssue[] {
  const v = validators.config;
  return v(data) ? [] : toIssues(v.errors ?? [], data, source, [], []);
}

/** Validate a saga file's value (one saga or a list); `display` prefixes the reported paths. */
export function validateSagaFile(data: unknown, source: YamlSource, display: readonly Seg[] = []): ConfigIssue[] {
  const v = validators.sagaFile;
  return v(data) ? [] : toIssues(v.errors ?? [], data, source, [], display);
}

function pathOf(pointer: string, data: unknown): Seg[] {
  if (pointer === '') return [];
  const out: Seg[] = [];
  let node: unknown = data;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const seg: Seg = Array.isArray(node) && /^\d+$/.test(key) ? Number(key) : key;
    out.push(seg);
    node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
  }
  return out;
}

function valueAt(data: unknown, path: readonly Seg[]): unknown {
  let node = data;
  for (const seg of path)
    node = node !== null && typeof node === 'object' ? (node as Record<Seg, unknown>)[seg] : undefined;
  return node;
}

function toIssues(
  errors: ErrorObject[],
  data: unknown,
  source: YamlSource,
  at: readonly Seg[],
  display: readonly Seg[],
): ConfigIssue[] {
  const collapsed = new Map<string, string>();
  for (const e of errors) {
    if (e.keyword !== 'anyOf') continue;
    const value = valueAt(data, pathOf(e.instancePath, data));
    if (value === null || typeof value !== 'object') {
      const description = (e.parentSchema as { description?: string } | undefined)?.description;
      collapsed.set(e.instancePath, description ? `must be ${description}` : 'is not one of the allowed forms');
    }
  }
  const issues: ConfigIssue[] = [];
  const seen = new Set<string>();
  const add = (path: Seg[], message: string, key = false) => {
    const full = [...at, ...path];
    const text = formatPath([...display, ...path]);
    const id = `${text}\u0000${message}`;
    if (seen.has(id)) return;
    seen.add(id);
    const { line, col } = source.locate(full, key);
    issues.push({ file: source.file, line, col, path: text, message, severity: 'error' });
  };
  for (const [pointer, message] of collapsed) add(pathOf(pointer, data), message);
  for (const e of errors) {
    const path = pathOf(e.instancePath, data);
    if (e.keyword === 'if' || e.keyword === 'anyOf' || collapsed.has(e.instancePath)) continue;
    if ([...collapsed.keys()].some((p) => e.instancePath.startsWith(`${p}/`))) continue;
    const value = valueAt(data, path);
    if (e.keyword === 'type' && value !== null && typeof value === 'object' && e.schemaPath.includes('/anyOf/'))
      continue;
    switch (e.keyword) {
      case 'required':
        add([...path, (e.params as { missingProperty: string }).missingProperty], 'required');
        break;
      case 'additionalProperties':
        add([...path, (e.params as { additionalProperty: string }).additionalProperty], 'unknown property', true);
        break;
      case 'discriminator':
        add([...path, 'type'], 'unknown type');
        break;
      default:
        add(path, e.message ?? 'invalid');
    }
  }
  return issues;
}
