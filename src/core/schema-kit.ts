import { Type, type Static, type TObject, type TUnion } from '@sinclair/typebox';
import { DURATION_PATTERN, MAX_UNIT_TEXT, SIZE_PATTERN } from './units.js';

/**
 * The building blocks of the configuration's JSON Schema, shared by the saga format
 * (saga/schema.ts) and the rest of the file (config/schema.ts).
 */

/** Objects reject unknown keys. */
export const strict = { additionalProperties: false } as const;
/** A name (1 to 128 characters) with what it names, for editors. */
export const NameOf = (description: string) => Type.String({ minLength: 1, maxLength: 128, description });

/** Milliseconds, a string of digits, or "250ms" / "2s" / "5m" / "1h". */
export const DurationSchema = Type.Union(
  [Type.Integer({ minimum: 0 }), Type.String({ pattern: DURATION_PATTERN, maxLength: MAX_UNIT_TEXT })],
  {
    description: 'milliseconds, or a string such as "250ms", "2s", "5m", "1h"',
  },
);
/** Bytes, or "512b" / "64kb" / "1mb" / "1gb" (1024-based). */
export const SizeSchema = Type.Union(
  [Type.Integer({ minimum: 0 }), Type.String({ pattern: SIZE_PATTERN, maxLength: MAX_UNIT_TEXT })],
  {
    description: 'bytes, or a string such as "512b", "64kb", "1mb", "1gb"',
  },
);

/**
 * A union told apart by its `type` field. Written as oneOf + discriminator so that a validator
 * reports the errors of the one variant that `type` names, not of every variant.
 */
export function Discriminated<T extends TObject[]>(variants: [...T]) {
  return Type.Unsafe<Static<TUnion<T>>>({
    type: 'object',
    required: ['type'],
    discriminator: { propertyName: 'type' },
    oneOf: variants,
  });
}

export const HttpMethod = Type.Union(
  ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'].map((m) => Type.Literal(m)),
  { description: 'one of GET, POST, PUT, PATCH, DELETE, HEAD' },
);
export const HttpStatus = (description: string) => Type.Integer({ minimum: 100, maximum: 599, description });
export const ConditionValue = Type.Union([Type.String(), Type.Number(), Type.Boolean()], {
  description: 'a string, number or boolean',
});

/** A duration with what it sets, for editors ("…; milliseconds, or a string such as …"). */
export const DurationOf = (description: string) =>
  Type.Union(DurationSchema.anyOf, { description: `${description}; ${DurationSchema.description}` });

/** A size with what it sets, for editors. */
export const SizeOf = (description: string) =>
  Type.Union(SizeSchema.anyOf, { description: `${description}; ${SizeSchema.description}` });
