import { Type, type Static, type TSchema } from '@sinclair/typebox';

/**
 * The configuration format (DESIGN §3, §4, §6.1). This file is the one source of both the
 * TypeScript types (`Static<...>`) and the published JSON Schema (`schema/sagaway.schema.json`,
 * written by `npm run schema`; a test fails when the file is stale).
 */

import { NameOf, strict } from '../core/schema-kit.js';
import { SagaSchema } from '../saga/schema.js';
import { ApiSchema, GatewaySchema } from './schema-gateway.js';
import { RunnerSchema } from './schema-runner.js';
import { StateSchema, SystemSchema } from './schema-stores.js';
import { ObservabilitySchema } from './schema-observability.js';

export { DurationSchema, SizeSchema } from '../core/schema-kit.js';
export { EventMetaSchema, ErrorSpecSchema, LinkSchema, SagaSchema, StepSchema } from '../saga/schema.js';
export type { RawEventMeta, RawLink, RawSaga, RawStep } from '../saga/schema.js';

export const ConfigSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String({ description: 'the JSON Schema of this file, for editors' })),
    gateway: Type.Optional(GatewaySchema),
    systems: Type.Optional(
      Type.Record(Type.String(), SystemSchema, { description: 'named connections: nats, http, local' }),
    ),
    defaultSystem: Type.Optional(NameOf('the system of event streams that name none; default local')),
    states: Type.Optional(
      Type.Record(Type.String(), StateSchema, { description: 'named stores of records: memory, sqlite, postgres' }),
    ),
    values: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
        description: 'named values for ${{NAME}} in injected settings',
      }),
    ),
    secrets: Type.Optional(
      Type.Union(
        [
          Type.Object(
            {
              from: Type.Literal('env', { description: 'read SECRET from the environment variable <prefix>SECRET' }),
              prefix: Type.Optional(Type.String({ description: 'default SAGAWAY_SECRET_' })),
            },
            strict,
          ),
          Type.Object(
            {
              from: Type.Literal('file', { description: 'read secrets from a JSON file' }),
              file: Type.String({ minLength: 1, description: 'the JSON file { NAME: value } (relative to this file)' }),
            },
            strict,
          ),
        ],
        { description: '{ from: env, prefix } or { from: file, file }: where #{{NAME}} secrets come from' },
      ),
    ),
    observability: Type.Optional(ObservabilitySchema),
    runners: Type.Optional(
      Type.Record(Type.String(), RunnerSchema, {
        description: 'runners by name: their handlers, sagas, actions, streams',
      }),
    ),
  },
  { ...strict, $id: 'https://sagaway.dev/schema/sagaway.schema.json', title: 'sagaway configuration' },
);

/** A saga file holds one saga or a list of them. */
export const SagaFileSchema = Type.Union([SagaSchema, Type.Array(SagaSchema)]);

export type RawConfig = Static<typeof ConfigSchema>;
export type RawRunner = Static<typeof RunnerSchema>;
export type RawSystem = Static<typeof SystemSchema>;
export type RawState = Static<typeof StateSchema>;
export type RawGateway = Static<typeof GatewaySchema>;
export type RawApi = Static<typeof ApiSchema>;
export type RawMetaLayers = Record<string, { default?: unknown; override?: unknown }>;

/** The JSON Schema document published at schema/sagaway.schema.json. */
export function publishedSchema(): TSchema {
  return { $schema: 'http://json-schema.org/draft-07/schema#', ...ConfigSchema };
}
