import type { Settings } from '../config/settings.js';
import type { HandlerFactory } from './api.js';

/**
 * Each built-in handler's module by the name a runner lists it under, imported on demand: the
 * same set as BUILTIN_HANDLERS (index.ts, which imports them all for the hosts), for `sagaway
 * validate`, which needs only those its runners list (the rest handler alone brings node:net and
 * four modules; issue 23, start-up cost).
 */
export const BUILTIN_HANDLER_MODULES: Readonly<Record<string, () => Promise<HandlerFactory>>> = Object.freeze({
  read: async () => (await import('./read.js')).readHandler,
  write: async () => (await import('./write.js')).writeHandler,
  query: async () => (await import('./query.js')).queryHandler,
  rest: async () => (await import('./rest/index.js')).restHandler,
  action: async () => (await import('./action.js')).actionHandler,
  task: async () => (await import('./task.js')).taskHandler,
  saga: async () => (await import('./saga.js')).sagaHandler,
});

/** The built-in handlers that some runner of `settings` lists, by name. */
export async function listedBuiltinHandlers(settings: Settings): Promise<Record<string, HandlerFactory>> {
  const names = new Set(Object.values(settings.runners).flatMap((r) => r.handlers));
  const listed = [...names].filter((n) => Object.hasOwn(BUILTIN_HANDLER_MODULES, n));
  const factories = await Promise.all(
    listed.map((n) => (BUILTIN_HANDLER_MODULES[n] as () => Promise<HandlerFactory>)()),
  );
  return Object.fromEntries(listed.map((n, i) => [n, factories[i] as HandlerFactory]));
}
