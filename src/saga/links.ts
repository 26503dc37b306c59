import type { CompiledLink, CompiledStep } from './graph.js';

/**
 * Which link a run follows out of a step (engine.ts route), at run time, over the links the
 * compile stage sorted (graph.ts planSaga): the rules of DESIGN §4.2 and §4.3 in one place.
 */

/**
 * Pick the link to follow (DESIGN §4.2, §4.3). `value` is the step's condition value; links
 * without `when` count only when the step did not fail; `"*"` links only when nothing else matches.
 * Links are pre-sorted, so the first match is the winner.
 */
export function selectLink(step: CompiledStep, value: string, failed: boolean): CompiledLink | undefined {
  let wildcard: CompiledLink | undefined;
  for (const link of step.links) {
    if (link.when === null) {
      if (!failed) return link;
    } else if (link.when.has(value) && value !== '*') {
      return link;
    } else if (link.wildcard && wildcard === undefined) {
      wildcard = link;
    }
  }
  return wildcard;
}
