import type { FastifyBaseLogger } from 'fastify';
import type { RunnerSettings } from '../../config/settings.js';
import type { SagaService } from '../../core/messages.js';
import { OutputChecks } from '../../config/output-check.js';

/**
 * `gateway.validateResponses: true` (docs/gateway.md#output-validation): the saga service seen
 * by both forms, with each SUCCESS checked against its saga's `outputSchema`. A mismatch is
 * answered `500 INVALID_OUTPUT` naming the saga (never the data) and logged with the failures'
 * pointers, so that the operator can find the step at fault. Wrapping the service keeps the
 * one-shot form, the stream form's polls and Idempotency-Key replays on one rule.
 */
export function checkingOutputs(
  service: SagaService,
  runners: Readonly<Record<string, RunnerSettings>>,
  log: FastifyBaseLogger,
): SagaService {
  const checks = new OutputChecks(runners);
  if (!checks.active) return service;
  return {
    async run(runner, req) {
      const checked = checks.check(runner, req.method, req.path, await service.run(runner, req));
      if (checked.failures !== undefined) {
        log.error(
          { reqId: req.requestId, runner, saga: checked.result.sagaId, failures: checked.failures },
          'the response does not match the outputSchema',
        );
      }
      return checked.result;
    },
  };
}
