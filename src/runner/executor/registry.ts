import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SagawayError } from '../../core/errors.js';
import { isObject } from '../../core/path.js';
import type { ActionFn, HandlerDefinition, HandlerEnv, HandlerFactory } from '../../handlers/api.js';

/**
 * The handlers a runner offers: built-ins by name and user modules by path. Lookups are strict:
 * a version the handler does not implement is ACTION_VERSION_UNSUPPORTED, never another version.
 */
export class HandlerRegistry {
  private readonly handlers = new Map<string, HandlerDefinition>();

  /** Add a handler; its name must be unique within the runner. */
  add(def: HandlerDefinition, origin: string): void {
    checkDefinition(def, origin);
    if (this.handlers.has(def.name))
      throw new SagawayError('CONFIG_INVALID', `handler "${def.name}" is defined twice (${origin})`);
    this.handlers.set(def.name, def);
  }

  has(name: string): boolean {
    return this.handlers.has(name);
  }

  /** The function for handler.action@version, or the coded error saying which part is missing. */
  resolve(handler: string, action: string, version: number): ActionFn {
    const def = this.handlers.get(handler);
    if (!def) throw new SagawayError('HANDLER_NOT_FOUND', `handler "${handler}" is not available on this runner`);
    const versions = Object.hasOwn(def.actions, action) ? def.actions[action] : undefined;
    if (!versions) throw new SagawayError('ACTION_NOT_FOUND', `handler "${handler}" has no action "${action}"`);
    const fn = Object.hasOwn(versions, version) ? versions[version] : undefined;
    if (typeof fn !== 'function') {
      const offered = Object.keys(versions).join(', ');
      throw new SagawayError(
        'ACTION_VERSION_UNSUPPORTED',
        `${handler}.${action} has no version ${version} (offered: ${offered})`,
      );
    }
    return fn;
  }

  /** What this runner offers: handler -> action -> versions (advertised to orchestrators). */
  describe(): Record<string, Record<string, number[]>> {
    const out: Record<string, Record<string, number[]>> = {};
    for (const [name, def] of this.handlers) {
      out[name] = Object.fromEntries(Object.entries(def.actions).map(([a, v]) => [a, Object.keys(v).map(Number)]));
    }
    return out;
  }
}

function checkDefinition(def: unknown, origin: string): asserts def is HandlerDefinition {
  const bad = (why: string) => new SagawayError('CONFIG_INVALID', `handler module ${origin}: ${why}`);
  if (!isObject(def)) throw bad('must export a handler object { name, actions }');
  if (typeof def['name'] !== 'string' || !/^[A-Za-z][A-Za-z0-9_-]{0,63}$/.test(def['name']))
    throw bad('needs a name of letters, digits, _ and -');
  if (!isObject(def['actions'])) throw bad('needs an actions object');
  for (const [action, versions] of Object.entries(def['actions'])) {
    if (!isObject(versions)) throw bad(`action "${action}" must map versions to functions`);
    for (const [v, fn] of Object.entries(versions)) {
      if (!/^(?:0|[1-9][0-9]*)$/.test(v))
        throw bad(`action "${action}" has a version "${v}" that is not an integer >= 0`);
      if (typeof fn !== 'function') throw bad(`action "${action}" version ${v} is not a function`);
    }
  }
}

/** Whether a `handlers` entry names a module file rather than a built-in. */
export function isModuleEntry(entry: string): boolean {
  return isAbsolute(entry) || entry.startsWith('.') || /\.(?:m?js|cjs|ts)$/.test(entry);
}

/**
 * Why a module did not load, in words a user can act on. A package the module imports that is
 * not installed (typically `sagaway` itself, in a project just created or cloned) gets the
 * remedy, not only Node's "Cannot find package" (issue 19, item 6).
 */
function loadFailure(e: unknown): string {
  const err = e as { code?: unknown; message?: unknown };
  const first = String(err?.message ?? e).split('\n')[0]!;
  // A .ts module on a Node that cannot strip types (20, 22 before 22.18): say what to do instead.
  if (err?.code === 'ERR_UNKNOWN_FILE_EXTENSION' && /\.[cm]?ts"?$|\.[cm]?ts /.test(first)) {
    return `${first}. This Node (${process.version}) cannot load TypeScript: compile the handler with tsc and name the .js file, or use Node 22.18 or later (docs/handler-api.md, "Handlers in TypeScript")`;
  }
  const pkg = err?.code === 'ERR_MODULE_NOT_FOUND' ? /Cannot find package '([^']{1,214})'/.exec(first)?.[1] : undefined;
  if (pkg === undefined) return first;
  return `it imports the package "${pkg}", which is not installed: run \`npm install\` in the project's folder (the one with its package.json)${pkg === 'sagaway' ? ', which has sagaway as a dependency' : ''}`;
}

/** Import a user handler module: its default export is a handler object, or a factory taking the env. */
export async function importHandlerModule(file: string, env: HandlerEnv): Promise<HandlerDefinition> {
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (e) {
    throw new SagawayError('CONFIG_INVALID', `cannot load handler module ${file}: ${loadFailure(e)}`);
  }
  const exported = mod.default;
  const def = typeof exported === 'function' ? (exported as HandlerFactory)(env) : exported;
  checkDefinition(def, file);
  return def;
}
