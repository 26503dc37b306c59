import type { Report } from '../config/compile.js';
import type { Settings } from '../config/settings.js';
import { SagawayError } from '../core/errors.js';
import { lazySilentLogger } from '../core/logger.js';
import type { HandlerEnv, HandlerFactory } from '../handlers/api.js';
import { eventMetasOf } from '../saga/graph.js';
import { suggestion } from '../core/suggest.js';
import { domainProblem } from './check-domains.js';
import { HandlerRegistry, importHandlerModule, isModuleEntry } from './executor/registry.js';

/**
 * Load every runner's handlers (built-ins and user modules) without opening states, and check
 * that each `local` event step names an action and version its runner offers: a wrong version is
 * a configuration error at load time, not a surprise at run time (`sagaway validate`).
 */
export async function checkHandlers(
  settings: Settings,
  builtins: Readonly<Record<string, HandlerFactory>>,
  report: Report,
): Promise<void> {
  for (const runner of Object.values(settings.runners)) {
    const unavailable = (): never => {
      throw new SagawayError('INTERNAL', 'not available while validating');
    };
    const env: HandlerEnv = {
      settings,
      runner,
      log: lazySilentLogger(),
      state: unavailable,
      runEvent: unavailable,
      runSaga: unavailable,
    };
    const registry = new HandlerRegistry();
    for (const [i, entry] of runner.handlers.entries()) {
      try {
        if (isModuleEntry(entry)) registry.add(await importHandlerModule(entry, env), entry);
        else if (builtins[entry]) registry.add(builtins[entry](env), entry);
      } catch (e) {
        report(settings.file, ['runners', runner.name, 'handlers', i], (e as Error).message);
      }
    }
    for (const saga of runner.sagas) {
      saga.steps.forEach((step, i) => {
        // the step's own event and its compensation's obey the same rules
        for (const { meta, at } of eventMetasOf(step)) {
          if ((meta.stream ?? 'local') !== 'local') continue;
          if (meta.handler === undefined || Object.hasOwn(runner.actions, meta.action)) continue;
          const where = [...saga.source.at, 'steps', i, ...at];
          if (!registry.has(meta.handler)) {
            const loaded = Object.keys(registry.describe());
            report(
              saga.source.file,
              [...where, 'handler'],
              `handler "${meta.handler}" is not loaded by runner "${runner.name}"${suggestion(meta.handler, loaded, 'loaded handlers')}`,
            );
            continue;
          }
          try {
            registry.resolve(meta.handler, meta.action, meta.version);
          } catch (e) {
            const code = (e as SagawayError).code;
            const field = code === 'ACTION_VERSION_UNSUPPORTED' ? 'version' : 'action';
            const actions = Object.keys(registry.describe()[meta.handler] ?? {});
            const choices = code === 'ACTION_NOT_FOUND' ? suggestion(meta.action, actions, 'actions') : '';
            report(saga.source.file, [...where, field], `${(e as Error).message}${choices} (${code})`);
            continue;
          }
          // A built-in loaded by its name (a module's handler of the same name is its own business).
          const problem = runner.handlers.includes(meta.handler) && domainProblem(settings, meta.handler, meta);
          if (problem) report(saga.source.file, [...where, 'domain'], `${problem} (DOMAIN_NOT_FOUND)`);
        }
      });
    }
  }
}
