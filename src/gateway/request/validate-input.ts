import type { ValidateFunction } from 'ajv';
import type { FastifyRequest } from 'fastify';
import { sagaSchemas } from '../../config/io-schemas.js';
import type { RunnerSettings } from '../../config/settings.js';
import { failuresOf, type SchemaFailure } from '../../core/json-schema.js';
import { roleRefusal } from '../../core/roles.js';
import { RouteTable } from '../../saga/routes.js';
import type { CompiledSaga } from '../../saga/graph.js';
import { problemFor, type Problem } from '../http/helpers/problem.js';
import { usesBody } from './input.js';

/**
 * The gateway's check of a saga's `inputSchema` (docs/gateway.md#input-validation), on both
 * forms, before any step runs: the body of POST, PUT and PATCH as sent; the query of GET,
 * DELETE and HEAD with its strings converted, in place, to the types the schema names (so the
 * saga reads `limit` as the number 5, not "5"). A refusal is `400 INVALID_INPUT` listing each
 * failure's JSON pointer and message (at most MAX_LISTED_FAILURES).
 *
 * Only the runners with a schema are matched (the runner's own routing: the saga that will
 * serve the request is the one whose schema applies); a request no saga serves, or one its saga
 * would refuse for the caller's roles, is left to the runner's answer (404, 405, 401, 403), so
 * that a caller without the role learns nothing from the schema.
 */

/** A 400 INVALID_INPUT problem with its failures. */
export interface InputProblem extends Problem {
  errors: SchemaFailure[];
}

interface Checked {
  body?: ValidateFunction;
  query?: ValidateFunction;
}

/** The input schemas of the configured runners. */
export class InputChecks {
  private readonly tables = new Map<string, RouteTable>();
  private readonly checks = new Map<CompiledSaga, Checked>();

  constructor(runners: Readonly<Record<string, RunnerSettings>>) {
    for (const [name, runner] of Object.entries(runners)) {
      let any = false;
      for (const plan of runner.plans) {
        if (plan.raw.inputSchema === undefined) continue;
        // Compiled at load (config/io-schemas.ts); settings made by code are compiled here, once.
        const { body, query } = sagaSchemas(plan.raw);
        this.checks.set(plan, { ...(body ? { body } : {}), ...(query ? { query } : {}) });
        any = true;
      }
      if (any) this.tables.set(name, new RouteTable(runner.plans));
    }
  }

  /** Whether any saga of this gateway declares an input schema. */
  get active(): boolean {
    return this.tables.size > 0;
  }

  /**
   * The problem to answer when `input` does not match the schema of the saga that serves this
   * admitted request; undefined when it does, or when no schema applies. May convert `input`'s
   * query strings in place.
   */
  check(request: FastifyRequest, input: Record<string, unknown>): InputProblem | undefined {
    const admitted = request.sagaway;
    if (admitted === null) return undefined;
    const table = this.tables.get(admitted.api.settings.runner);
    if (table === undefined) return undefined;
    const match = table.match(request.method, admitted.sagaPath.path);
    if (match.kind !== 'found') return undefined;
    const checked = this.checks.get(match.saga);
    if (checked === undefined || roleRefusal(match.saga.roles, admitted.principal) !== undefined) return undefined;
    const body = usesBody(request.method);
    const validate = body ? checked.body : checked.query;
    if (validate === undefined || validate(input)) return undefined;
    const errors = failuresOf(validate.errors ?? []);
    const what = body ? 'the request body' : 'the query';
    return {
      ...problemFor('INVALID_INPUT', request.id, `${what} does not match the input schema of this API`),
      errors,
    };
  }
}
