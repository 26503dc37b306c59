import type { Cancellable } from '../core/cancel.js';
import { SagawayError, toErrorInfo } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { SagaRequest, SagaResult } from '../core/types.js';
import type { EventMessage, EventReply } from '../core/messages.js';
import type { RunnerEndpoint, System } from './system.js';

/** The runners of this process: the transports' one endpoint interface (system.ts). */
export type LocalEndpoint = RunnerEndpoint;

/**
 * The `local` system: everything in one process. Saga requests go to the runner by name; an
 * event on a stream goes to the runners of this process that consume that stream, filtered by
 * the step's `deployments`. When several match, each runs it and the first reply is kept
 * (DESIGN §6.1 `deployments`); the others are logged as duplicates.
 */
export class LocalSystem implements System {
  readonly type = 'local' as const;
  private readonly endpoints = new Map<string, LocalEndpoint>();

  constructor(
    readonly name: string,
    private readonly log: Logger,
  ) {}

  /** Make a runner of this process reachable. */
  register(endpoint: LocalEndpoint): void {
    this.endpoints.set(endpoint.name, endpoint);
  }

  run(runner: string, req: SagaRequest): Promise<SagaResult> {
    const endpoint = this.endpoints.get(runner);
    if (!endpoint) {
      const error = toErrorInfo(new SagawayError('RUNNER_UNAVAILABLE', `runner "${runner}" is not running`));
      return Promise.resolve({ outcome: 'FAIL', http: 503, error, ran: 'none' });
    }
    return endpoint.run(req);
  }

  async dispatch(event: EventMessage, cancel: Cancellable): Promise<EventReply> {
    const allowed = event.meta.deployments;
    const targets = [...this.endpoints.values()].filter(
      (e) => Object.hasOwn(e.streams, event.stream) && (!allowed || allowed.includes(e.deployment)),
    );
    if (targets.length === 0) {
      return {
        status: 'FAIL',
        error: toErrorInfo(new SagawayError('RUNNER_UNAVAILABLE', `no runner consumes stream "${event.stream}"`)),
        inputElement: null,
        outputElement: null,
        sent: false,
      };
    }
    const runs = targets.map((t) =>
      t.execute(event, t.streams[event.stream], cancel).then((r) => ({ ...r, deployment: t.deployment })),
    );
    const first = await Promise.race(runs);
    if (runs.length > 1) {
      this.log.warn(
        { stream: event.stream, step: event.stepId, runners: targets.map((t) => t.name) },
        'event ran on several deployments; the first reply was kept',
      );
    }
    return first;
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.endpoints.clear();
  }
}
