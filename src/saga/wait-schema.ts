import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { DurationOf, strict } from '../core/schema-kit.js';

/**
 * The settings of a `wait` step (issue 21, DESIGN §11): a timer (`for`, `until`) or a signal
 * (`signal`, with `approvals`), bounded by `timeout`, and a `notify` event run once the wait is
 * stored. They are fields of the step itself, next to `type: wait`; saga/wait-plan.ts checks
 * which combinations make sense, with located errors.
 */

export const WaitSignalSchema = Type.Object(
  {
    name: Type.String({
      pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$',
      description: 'the signal that resumes the wait: POST /api/runs/<runId>/signals/<name> or /api/signals/<name>',
    }),
    key: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description:
          'JSONata over the payload giving the correlation key: POST /api/signals/<name> with the same key resumes it',
      }),
    ),
    roles: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
        maxItems: 64,
        description: 'only callers with one of these roles may send the signal (the callback URL needs none)',
      }),
    ),
    schema: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: "JSON Schema (2020-12) the signal's body must satisfy (400 SIGNAL_INVALID otherwise)",
      }),
    ),
  },
  { ...strict, description: 'wait: resumed by a signal of this name (and key)' },
);

export const ApprovalsSchema = Type.Object(
  {
    required: Type.Integer({ minimum: 1, maximum: 100, description: 'distinct principals that must approve' }),
    selfApproval: Type.Optional(
      Type.Boolean({ description: "whether the run's own caller may approve; default false" }),
    ),
  },
  { ...strict, description: 'wait: an approval; one rejection ends it REJECTED' },
);

/**
 * The wait fields a step may carry (all optional in the schema; wait-plan.ts checks the
 * combination). `eventMeta` is the saga format's event settings (schema.ts hands it in: no cycle).
 */
export const waitFields = <E extends TSchema>(eventMeta: E) => ({
  for: Type.Optional(DurationOf('wait: a timer of this length, ending SUCCESS')),
  until: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'wait: JSONata giving the ISO 8601 time (or epoch ms) the timer falls due, ending SUCCESS',
    }),
  ),
  signal: Type.Optional(WaitSignalSchema),
  approvals: Type.Optional(ApprovalsSchema),
  timeout: Type.Optional(
    DurationOf('wait: how long a signal wait lasts before it ends TIMEOUT (required with signal)'),
  ),
  notify: Type.Optional(
    Type.Object(
      { eventMeta },
      {
        ...strict,
        description:
          'wait: an event run once the wait is stored; its input is { wait: { runId, step, until, callbacks } }',
      },
    ),
  ),
});

export type RawWaitSignal = Static<typeof WaitSignalSchema>;
export type RawApprovals = Static<typeof ApprovalsSchema>;
