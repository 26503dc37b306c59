import type { StreamBindingSettings } from '../../config/settings.js';
import type { Cancellable } from '../../core/cancel.js';
import type { EventMessage, EventReply } from '../../core/messages.js';
import { tracing } from '../../core/otel.js';

/** What tracing an executed event needs of the runner. */
interface Executing {
  readonly name: string;
  executeUntraced(
    event: EventMessage,
    binding: StreamBindingSettings | undefined,
    cancel: Cancellable,
  ): Promise<EventReply>;
}

/**
 * Execute an event of a traced run inside its action's span (docs/tracing.md): a child of the
 * orchestrating step's span, whose context came with the event (a NATS header, or in process),
 * with the handler, action, version, try and outcome. Only ids, names and codes are recorded.
 */
export async function tracedExecute(
  runner: Executing,
  event: EventMessage,
  binding: StreamBindingSettings | undefined,
  cancel: Cancellable,
): Promise<EventReply> {
  const span = tracing.current!.action({
    parent: event.trace!,
    runId: event.runId,
    step: event.stepId,
    stream: event.stream,
    handler: event.meta.handler,
    action: event.meta.action,
    version: event.meta.version,
    attempt: event.attempt ?? 1,
    runner: runner.name,
  });
  const reply = await runner.executeUntraced(event, binding, cancel);
  span.end(reply.status, reply.error?.code);
  return reply;
}
