import type { Report } from '../config/compile.js';
import type { Settings } from '../config/settings.js';
import { eventMetasOf } from '../saga/graph.js';

/**
 * Checks of event steps on non-local streams (`sagaway validate`):
 * - `responseSystem` must name a nats system (replies travel through NATS);
 * - a step on a stream that several deployments consume in this file, without `deployments`,
 *   runs on each of them (duplicate actions, the first reply wins): a warning (DESIGN §6.1).
 */
export function checkDistributed(settings: Settings, report: Report): void {
  // stream (per system) -> "runner/deployment" that consume it
  const consumers = new Map<string, Set<string>>();
  for (const r of Object.values(settings.runners)) {
    for (const b of Object.values(r.streams)) {
      const key = `${b.system}\0${b.name}`;
      consumers.set(key, (consumers.get(key) ?? new Set()).add(`${r.name}/${r.deployment}`));
    }
  }
  for (const runner of Object.values(settings.runners)) {
    for (const saga of runner.sagas) {
      saga.steps.forEach((step, i) => {
        for (const found of eventMetasOf(step)) {
          const meta = found.meta;
          const stream = meta.stream ?? 'local';
          if (stream === 'local') continue;
          const at = [...saga.source.at, 'steps', i, ...found.at];
          if (meta.responseSystem !== undefined && settings.systems[meta.responseSystem]?.type !== 'nats') {
            report(saga.source.file, [...at, 'responseSystem'], `"${meta.responseSystem}" is not a nats system`);
          }
          const system = meta.system ?? settings.defaultSystem ?? 'local';
          const deployments = consumers.get(`${system}\0${stream}`);
          if (meta.deployments === undefined && deployments && deployments.size > 1) {
            report(
              saga.source.file,
              [...at, 'stream'],
              `stream "${stream}" is consumed by ${[...deployments].join(', ')} and this step names no deployments: each runs it, the first reply is kept`,
              'warning',
            );
          }
        }
      });
    }
  }
}
