import { Type } from '@sinclair/typebox';
import { strict } from '../core/schema-kit.js';

/**
 * `gateway.openapi` and `gateway.validateResponses` (docs/gateway.md#openapi): the published
 * document's switch, servers and license, and whether the gateway checks answers against each
 * saga's `outputSchema`.
 */

const Server = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      pattern: '^(https?://|/)',
      description: 'the base URL clients call (https://api.example.com), or a path on this host (/)',
    }),
    description: Type.Optional(Type.String({ maxLength: 1024, description: 'free text, e.g. production' })),
  },
  strict,
);

const License = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256, description: 'the license name, e.g. Apache 2.0' }),
    identifier: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: 'its SPDX expression, e.g. Apache-2.0' }),
    ),
    url: Type.Optional(Type.String({ pattern: '^https?://', description: 'a URL of its text' })),
  },
  strict,
);

export const OpenApiSchema = Type.Union(
  [
    Type.Boolean(),
    Type.Object(
      {
        enabled: Type.Optional(Type.Boolean({ description: 'serve the document; default true' })),
        servers: Type.Optional(
          Type.Array(Server, {
            minItems: 1,
            maxItems: 32,
            description: "where clients reach the APIs; default this gateway's configured host and port",
          }),
        ),
        license: Type.Optional(
          Type.Union([Type.String({ minLength: 1, maxLength: 256 }), License], {
            description:
              "the APIs' license (info.license): an SPDX id or { name, identifier, url }; default the license of the nearest package.json",
          }),
        ),
      },
      strict,
    ),
  ],
  {
    description:
      'the OpenAPI 3.1 document at GET /api/openapi.json: true/false, or { enabled, servers, license }; default true',
  },
);

export const ValidateResponsesSchema = Type.Boolean({
  description:
    "check each saga's answer against its outputSchema: a mismatch is 500 INVALID_OUTPUT (and a log line with the pointer); default false",
});
