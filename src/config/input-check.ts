import { sagaSchemas } from './io-schemas.js';
import type { RunnerSettings } from './settings.js';
import { failuresOf, type SchemaFailure } from '../core/json-schema.js';
import { RouteTable } from '../saga/routes.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * The gateway's input check (gateway/request/validate-input.ts) for one request made outside
 * it (`sagaway run`): the failures of `input` against the inputSchema of the saga of `runner`
 * serving `method path`, with the query's strings coerced in place; undefined when it matches
 * or no schema applies.
 */
export function inputFailures(
  runner: RunnerSettings,
  method: string,
  path: string,
  input: Record<string, unknown>,
): { saga: string; failures: SchemaFailure[] } | undefined {
  const match = new RouteTable(runner.plans).match(method, path);
  if (match.kind !== 'found' || match.saga.raw.inputSchema === undefined) return undefined;
  const schemas = sagaSchemas(match.saga.raw);
  const validate = BODY_METHODS.has(method) ? schemas.body : schemas.query;
  if (validate === undefined || validate(input)) return undefined;
  return { saga: match.saga.id, failures: failuresOf(validate.errors ?? []) };
}
