import type { Subscription } from '@nats-io/transport-node';
import { MAX_LISTED_RUNS, type RunnerEndpoint, type RunsAnswer } from '../system.js';
import type { NatsSystem } from './system.js';

/**
 * The runner process's side of `sagaway admin runs`: on `P.admin.runs` (core NATS, not stored)
 * every runner process answers with the gateway runs it has in flight, from memory. Nothing is
 * written per run for this; a process that is gone has nothing in flight (its journaled runs are
 * resumed by a survivor, its other runs show LOST at /api/status). Only ids, saga ids and start
 * times are sent: never an input, a payload or a principal.
 */

/** The prefix of nats.js inboxes (createInbox), where `sagaway admin runs` waits for answers. */
const INBOX = '_INBOX.';

/** Answer `sagaway admin runs` for the runners of this process, after every (re)connection. */
export function answerRunQueries(
  system: NatsSystem,
  endpoints: readonly RunnerEndpoint[],
  instance: string,
): { stop(): void } {
  let sub: Subscription | undefined;
  system.whenConnected(async () => {
    if (sub) return;
    sub = system.subscribe(system.names.adminRuns, {
      callback: (err, msg) => {
        // Only an inbox: a publisher on this subject must not make the runner publish where it
        // chooses, with the runner's permissions (`$JS.API.STREAM.DELETE.<stream>` as reply).
        if (err || !msg.reply?.startsWith(INBOX)) return;
        const answer: RunsAnswer = {
          v: 1,
          instance,
          runners: endpoints.map((e) => {
            const { count, runs } = e.inFlightRuns?.(MAX_LISTED_RUNS) ?? { count: 0, runs: [] };
            return { runner: e.name, deployment: e.deployment, count, runs };
          }),
        };
        msg.respond(JSON.stringify(answer));
      },
    });
  });
  return { stop: () => sub?.unsubscribe() };
}
