import type { RunsAnswer } from '../system.js';
import { NotConnectedError } from './errors.js';
import type { NatsSystem } from './system.js';

/**
 * What `sagaway admin` does on a nats system (the command line is cli/admin.ts):
 *
 * - the durable consumers of the events stream, one per (stream, runner, deployment), each
 *   marked `live` when a live runner process of that runner and deployment consumes the stream
 *   (per the advertisements, nats/directory.ts), else `retired`: nothing will read its events
 *   any more. A consumer whose name does not match what sagaway would call it is `foreign` and
 *   never removed.
 * - the runs in flight, as each runner process answers on `P.admin.runs` (admin-responder.ts).
 */

/** One durable consumer of the events stream. */
export interface ConsumerRow {
  name: string;
  stream?: string;
  runner?: string;
  deployment?: string;
  /** events stored for it and not delivered yet */
  pending: number;
  /** events delivered and not acknowledged yet */
  ackPending: number;
  /** when it last delivered, ISO (absent: never) */
  lastActive?: string;
  state: 'live' | 'retired' | 'foreign';
}

const DESCRIPTION_HEAD = 'sagaway stream ';
const RUNNER_SEP = ', runner ';
const DEPLOYMENT_SEP = ', deployment ';

/** The (stream, runner, deployment) of a consumer, from its description, checked against its name. */
function identify(system: NatsSystem, name: string, description: string | undefined) {
  if (!description?.startsWith(DESCRIPTION_HEAD)) return undefined;
  const d = description.lastIndexOf(DEPLOYMENT_SEP);
  const r = description.lastIndexOf(RUNNER_SEP, d);
  if (d < 0 || r < DESCRIPTION_HEAD.length) return undefined;
  const stream = description.slice(DESCRIPTION_HEAD.length, r);
  const runner = description.slice(r + RUNNER_SEP.length, d);
  const deployment = description.slice(d + DEPLOYMENT_SEP.length);
  // The name is a hash of the three: a description that does not produce it is not ours.
  return system.names.consumer(stream, runner, deployment) === name ? { stream, runner, deployment } : undefined;
}

/** The durable consumers of the events stream, with what the live advertisements say of them. */
export async function listConsumers(system: NatsSystem): Promise<ConsumerRow[]> {
  const jsm = system.jetstream().manager;
  const live = new Set<string>();
  for (const ad of system.directory.live()) {
    if (ad.system !== system.name) continue;
    for (const stream of Object.keys(ad.streams)) live.add(`${stream}\0${ad.runner}\0${ad.deployment}`);
  }
  const rows: ConsumerRow[] = [];
  for await (const info of jsm.consumers.list(system.names.eventsStream)) {
    const who = identify(system, info.name, info.config.description);
    const last = info.delivered?.last_active as unknown;
    rows.push({
      name: info.name,
      ...(who ?? {}),
      pending: info.num_pending,
      ackPending: info.num_ack_pending,
      ...(typeof last === 'string' && Date.parse(last) > 0 ? { lastActive: new Date(last).toISOString() } : {}),
      state: !who ? 'foreign' : live.has(`${who.stream}\0${who.runner}\0${who.deployment}`) ? 'live' : 'retired',
    });
  }
  return rows.sort((a, b) =>
    `${a.runner}\0${a.deployment}\0${a.stream}`.localeCompare(`${b.runner}\0${b.deployment}\0${b.stream}`),
  );
}

/** Delete one consumer of the events stream. */
export async function deleteConsumer(system: NatsSystem, name: string): Promise<void> {
  await system.jetstream().manager.consumers.delete(system.names.eventsStream, name);
}

/**
 * Ask every runner process for its runs in flight; collect the answers until every live
 * process (per the advertisements) answered, or `waitMs` passed.
 */
export async function collectRuns(system: NatsSystem, waitMs: number): Promise<RunsAnswer[]> {
  const { createInbox } = await import('@nats-io/transport-node');
  const expected = new Set(system.directory.live().map((ad) => ad.instance));
  const answers = new Map<string, RunsAnswer>();
  const inbox = createInbox();
  await new Promise<void>((done) => {
    const timer = setTimeout(finish, waitMs);
    const sub = system.subscribe(inbox, {
      callback: (err, msg) => {
        if (err) return;
        try {
          const a = JSON.parse(Buffer.from(msg.data).toString('utf8')) as RunsAnswer;
          if (a?.v !== 1 || typeof a.instance !== 'string' || !Array.isArray(a.runners)) return;
          answers.set(a.instance, a);
          if (expected.size > 0 && [...expected].every((i) => answers.has(i))) finish();
        } catch {
          /* not an answer */
        }
      },
    });
    function finish(): void {
      clearTimeout(timer);
      sub?.unsubscribe();
      done();
    }
    if (!sub) {
      clearTimeout(timer);
      throw new NotConnectedError();
    }
    system.publish(system.names.adminRuns, '', { reply: inbox });
  });
  return [...answers.values()].sort((a, b) => a.instance.localeCompare(b.instance));
}
