import { SagawayError } from '../../core/errors.js';
import type { RedriveStep } from '../../core/runs.js';
import type { CompiledSaga, CompiledStep } from '../../saga/graph.js';

/**
 * Which step a redrive goes on from, and which steps may run again (run-admin.ts, docs/runs.md):
 * `failed` is the step the journal says comes next (the step after the last event step that
 * completed: the failed one, or the transforms and conditions before it), else a step of the
 * saga by id. The steps that may run again are those reachable from it by the saga's links, in
 * the order met (which of them run depends on the conditions); the event steps among them say
 * whether their step declared its action idempotent (`idempotent: true`).
 */
export function redrivePlan(
  saga: CompiledSaga,
  fromStep: string,
  next: string | undefined,
): { from: CompiledStep; steps: RedriveStep[] } {
  const id = fromStep === 'failed' ? next : fromStep;
  // `start` is the start step whatever its id (docs/runs.md)
  const from = id === undefined ? saga.start : (saga.steps.get(id) ?? (id === 'start' ? saga.start : undefined));
  if (!from || from.type === 'success' || from.type === 'fail') {
    throw new SagawayError(
      'VALIDATION_FAILED',
      `fromStep: "failed" or the id of a start, event, transform, condition or wait step of saga "${saga.id}"`,
    );
  }
  const seen = new Set<string>([from.id]);
  const order: CompiledStep[] = [];
  const queue: CompiledStep[] = [from];
  while (queue.length > 0) {
    const step = queue.shift()!;
    order.push(step);
    for (const link of step.links) {
      if (seen.has(link.target.id)) continue;
      seen.add(link.target.id);
      queue.push(link.target);
    }
  }
  const steps = order
    .filter((s) => s.type === 'event' || s.type === 'transform' || s.type === 'condition' || s.type === 'wait')
    .map((s): RedriveStep => {
      if (s.type !== 'event') return { id: s.id, type: s.type };
      const m = s.meta.raw;
      return {
        id: s.id,
        type: 'event',
        action: `${m.handler ?? 'action'}.${m.action}@${m.version}`,
        idempotent: (s.raw as { idempotent?: unknown }).idempotent === true,
      };
    });
  return { from, steps };
}
