import { isForbiddenKey } from '../core/path.js';

/**
 * Fields of eventMeta that structural actions and stream bindings may default or override
 * (DESIGN §6.6). Routing fields (stream, system, deployments, followAck, timeout, response*)
 * belong to the orchestrating step and are not layered.
 */
export const LAYER_FIELDS: ReadonlySet<string> = new Set([
  'handler',
  'action',
  'version',
  'domain',
  'inputElement',
  'outputElement',
  'parameters',
  'inject',
]);

/** Whether a meta key (`parameters.url`) names a field layers may set. */
export function isLayerField(key: string): boolean {
  const parts = key.split('.');
  return LAYER_FIELDS.has(parts[0] as string) && !parts.some(isForbiddenKey) && !parts.includes('');
}
