import { createHash } from 'node:crypto';

/**
 * Subject, stream and consumer names of one NATS system (prefix P, `sagaway` by default). The
 * layout is documented in docs/distributed.md:
 *
 *   P.run.<runner>                        gateway -> runner saga requests (core request/reply, queue group)
 *   P.adv / P.adv.query                   runner advertisements (core pub/sub)
 *   P.ev.<stream>.<runner>.<deployment>   events (JetStream stream P_events, one durable consumer per subject)
 *   P.reply.<instance>                    default reply route of an orchestrating process (core)
 *   P.resp.<responseStream>.<instance>    replies on a named response stream (JetStream stream P_resp)
 *   P.admin.runs                          `sagaway admin runs`: every runner process answers with its runs in flight
 *   $KV.P_status_<runner>.*               outcomes of a runner without a journal (KV bucket P_status_<runner>)
 */

const SIMPLE = /^[A-Za-z0-9_-]{1,64}$/;

/** A name as one subject token: itself when simple, else a stable hash (no `.`, `*`, `>` or spaces). */
export function token(name: string): string {
  return SIMPLE.test(name) ? name : `h${createHash('sha256').update(name).digest('hex').slice(0, 24)}`;
}

/** The names of one system's subjects and JetStream objects. */
export class Names {
  readonly eventsStream: string;
  readonly responsesStream: string;
  readonly adv: string;
  readonly advQuery: string;
  /** `sagaway admin runs` asks here; every runner process answers */
  readonly adminRuns: string;

  constructor(readonly prefix: string) {
    this.eventsStream = `${prefix}_events`;
    this.responsesStream = `${prefix}_resp`;
    this.adv = `${prefix}.adv`;
    this.advQuery = `${prefix}.adv.query`;
    this.adminRuns = `${prefix}.admin.runs`;
  }

  /** subject (and queue group) on which a runner's replicas serve saga requests */
  run(runner: string): string {
    return `${this.prefix}.run.${token(runner)}`;
  }

  /** subject of events on `stream` for one deployment of one runner */
  event(stream: string, runner: string, deployment: string): string {
    return `${this.prefix}.ev.${token(stream)}.${token(runner)}.${token(deployment)}`;
  }

  /** all event subjects (the events stream's subject filter) */
  get allEvents(): string {
    return `${this.prefix}.ev.>`;
  }

  /** durable consumer shared by the replicas of one deployment of one runner on one stream */
  consumer(stream: string, runner: string, deployment: string): string {
    const h = createHash('sha256').update(`${stream}\0${runner}\0${deployment}`).digest('hex').slice(0, 20);
    return `${this.prefix}_ev_${h}`;
  }

  /** default reply route of one process */
  reply(instance: string): string {
    return `${this.prefix}.reply.${instance}`;
  }

  /** reply subject on a named response stream */
  response(responseStream: string, instance: string): string {
    return `${this.prefix}.resp.${token(responseStream)}.${instance}`;
  }

  /** all response-stream replies addressed to one process */
  responsesFor(instance: string): string {
    return `${this.prefix}.resp.*.${instance}`;
  }

  /** all response subjects (the responses stream's subject filter) */
  get allResponses(): string {
    return `${this.prefix}.resp.>`;
  }
}
