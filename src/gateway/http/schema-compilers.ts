import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

/**
 * fastify's schema compilers (Ajv for route validation, fast-json-stringify for responses),
 * loaded at the first route that declares a schema instead of when the fastify instance is made.
 * The gateway's routes declare none (a saga's input schema is checked by the gateway itself,
 * request/validate-input.ts), so `sagaway start` no longer loads a second Ajv before it listens
 * (≈ 50 ms, issue 23). Each is fastify's own factory (required from where fastify requires it),
 * called with the same arguments.
 */
type Factories = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type Factory = (...args: unknown[]) => unknown;

function lazy(name: string): unknown {
  let factory: Factory | undefined;
  return (...args: unknown[]) => {
    if (factory === undefined) {
      const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
      factory = (fromFastify(name) as () => Factory)();
    }
    return factory(...args);
  };
}

export const lazySchemaCompilers: Factories = {
  buildValidator: lazy('@fastify/ajv-compiler') as Factories['buildValidator'],
  buildSerializer: lazy('@fastify/fast-json-stringify-compiler') as Factories['buildSerializer'],
};
