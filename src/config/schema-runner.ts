import { Type } from '@sinclair/typebox';
import { DurationOf, NameOf, SizeOf, strict } from '../core/schema-kit.js';
import { SagaSchema } from '../saga/schema.js';

/** The `runners` section of the configuration format (schema.ts assembles the file). */

/** `{ default?, override? }` for one field of an event's settings (DESIGN §6.6). */
const MetaLayer = Type.Object(
  {
    default: Type.Optional(Type.Unknown({ description: 'used unless the step sets the field' })),
    override: Type.Optional(Type.Unknown({ description: 'used whatever the step sets' })),
  },
  strict,
);
const MetaLayers = Type.Record(Type.String(), MetaLayer, {
  description: 'eventMeta field (dots for nested: parameters.url) -> { default, override }',
});

export const StructuralActionSchema = Type.Object(
  {
    handler: Type.Optional(NameOf('the handler that runs it')),
    description: Type.Optional(Type.String({ description: 'free text' })),
    meta: Type.Optional(MetaLayers),
  },
  strict,
);

export const StreamBindingSchema = Type.Object(
  {
    handler: Type.Optional(NameOf('events on this stream default to this handler')),
    system: Type.Optional(NameOf('system of the stream; default defaultSystem, else local')),
    meta: Type.Optional(MetaLayers),
  },
  strict,
);

export const RunnerSchema = Type.Object(
  {
    deployment: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'this runner\'s deployment id; default "1"' }),
    ),
    handlers: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description: 'built-in handler names and paths of handler modules (relative to this file)',
      }),
    ),
    sagas: Type.Optional(
      Type.Array(Type.Union([Type.String({ minLength: 1 }), SagaSchema]), {
        description: 'globs of saga files (relative to this file) and inline sagas',
      }),
    ),
    actions: Type.Optional(
      Type.Record(Type.String(), StructuralActionSchema, {
        description: 'structural actions: name -> { handler, meta } defaults and overrides of event settings',
      }),
    ),
    streams: Type.Optional(
      Type.Record(Type.String(), StreamBindingSchema, {
        description: 'event streams this runner consumes: name -> { handler, system, meta }',
      }),
    ),
    statusTtl: Type.Optional(
      DurationOf(
        "distributed mode: how long each run's outcome stays readable at /api/status without a journal (a NATS key-value bucket); 0 = not kept; default 24h",
      ),
    ),
    statusMaxSize: Type.Optional(
      SizeOf(
        'largest outcome kept for /api/status without a journal; a larger response is left out (responseOmitted); default 64kb, at most 1mb',
      ),
    ),
    maxSteps: Type.Optional(Type.Integer({ minimum: 1, description: 'steps one saga run may take; default 1000' })),
    maxRunsPerRequest: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100000,
        description:
          "saga runs one request may start: its own and the nested sagas (saga.StartSaga) at any depth; past it RUN_BUDGET_EXCEEDED; the request's onFail runs have a budget of the same size; default 100",
      }),
    ),
    journal: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'alias of a state where saga progress is journaled (resume, /api/status)',
      }),
    ),
    journalRetention: Type.Optional(
      DurationOf(
        'how long the journal keeps a finished run (its outcome for /api/status) after its last write; running runs are never removed; default 7d',
      ),
    ),
    resumeInterval: Type.Optional(
      DurationOf(
        'with a journal: how often this process looks for journaled runs whose process is gone, to resume or unwind them (also when finished runs past journalRetention are removed, at most once a minute); with several runners in one process, the shortest; default 5s',
      ),
    ),
    waitPoll: Type.Optional(
      DurationOf(
        'with wait steps: how often this process looks for waits that are due or decided (timers, signals, cancels) to resume their runs; default 1s',
      ),
    ),
    waitLease: Type.Optional(
      DurationOf(
        'with wait steps: how long a process holds a wait it took to resume its run; after it, another replica may take it (a process killed meanwhile); default 30s',
      ),
    ),
  },
  strict,
);

// ---------------------------------------------------------------- systems and states
