import { Type } from '@sinclair/typebox';
import { strict } from '../core/schema-kit.js';

/**
 * `observability`: OpenTelemetry tracing (docs/tracing.md). Without `tracing.enabled`, the
 * standard `OTEL_*` environment variables decide (config/tracing.ts).
 */
export const ObservabilitySchema = Type.Object(
  {
    tracing: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(
            Type.Boolean({
              description:
                'export spans over OTLP/HTTP; default: on when OTEL_TRACES_EXPORTER=otlp or an OTLP endpoint variable is set',
            }),
          ),
          endpoint: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 2048,
              pattern: '^https?://',
              description:
                'the OTLP/HTTP base URL (a collector, Jaeger, Tempo): spans go to <endpoint>/v1/traces; default OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318',
            }),
          ),
          serviceName: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 128,
              description: 'service.name of the spans; default OTEL_SERVICE_NAME, else sagaway',
            }),
          ),
          sampleRatio: Type.Optional(
            Type.Number({
              minimum: 0,
              maximum: 1,
              description:
                "share of new traces recorded (a caller's sampled flag is followed); default OTEL_TRACES_SAMPLER_ARG, else 1",
            }),
          ),
          headers: Type.Optional(
            Type.Record(Type.String({ maxLength: 128 }), Type.String({ maxLength: 4096 }), {
              maxProperties: 32,
              description: 'headers of every export (an API key: use ${env:NAME}); default OTEL_EXPORTER_OTLP_HEADERS',
            }),
          ),
        },
        { ...strict, description: 'OpenTelemetry traces exported over OTLP/HTTP (docs/tracing.md)' },
      ),
    ),
  },
  { ...strict, description: 'traces of requests, saga runs, steps and remote actions' },
);
