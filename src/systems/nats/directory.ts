import { SagawayError, toErrorInfo, type ErrorInfo } from '../../core/errors.js';
import { isObject } from '../../core/path.js';
import type { RawEventMeta } from '../../config/schema.js';

/**
 * Who is alive on a NATS system: every runner process publishes an advertisement (its runner,
 * deployment, the streams it consumes and the handler actions and versions it offers) every
 * `advertiseInterval` (systems.X.advertiseInterval), answers a query at once, and says goodbye when it stops. An entry that
 * is not refreshed for EXPIRY_FACTOR intervals is dead (a process killed with -9).
 */

/** Intervals without an advertisement after which a process is considered gone. */
export const EXPIRY_FACTOR = 3;

/** A stream a runner consumes, as advertised. */
export interface AdvertisedStream {
  handler?: string;
  /** the binding's meta defaults or overrides handler, action or version: offers cannot be checked here */
  dynamic: boolean;
}

/** One process's advertisement of one runner. */
export interface Advertisement {
  v: number;
  instance: string;
  runner: string;
  deployment: string;
  /** the nats system the streams are bound on */
  system: string;
  streams: Record<string, AdvertisedStream>;
  /** handler -> action -> versions */
  handlers: Record<string, Record<string, number[]>>;
  /** structural action aliases (they resolve on the runner) */
  actions: string[];
  /** true on the last message of a process that stops */
  bye?: boolean;
}

/** A (runner, deployment) that an event can be sent to. */
export interface Target {
  runner: string;
  deployment: string;
}

/** The live advertisements, with expiry. */
export class Directory {
  private readonly entries = new Map<string, { ad: Advertisement; expires: number }>();
  /**
   * Answers of targets() per event meta (the frozen meta of a saga plan, one object per step),
   * valid while no advertisement arrived (`generation`) and none of those it used expired
   * (`until`): the orchestrator looks up every event it sends, the directory changes every few
   * seconds.
   */
  private readonly cache = new WeakMap<
    RawEventMeta,
    Map<string, { generation: number; until: number; answer: ReturnType<Directory['targets']> }>
  >();
  private generation = 0;

  /** `advertiseIntervalMs`: how often every process on the system advertises itself */
  constructor(private readonly advertiseIntervalMs: number) {}

  /** Record an advertisement (or forget its instance on `bye`). */
  accept(value: unknown, now = Date.now()): void {
    if (!isAdvertisement(value)) return;
    this.generation++;
    const key = `${value.instance}\0${value.runner}`;
    if (value.bye) this.entries.delete(key);
    else this.entries.set(key, { ad: value, expires: now + this.advertiseIntervalMs * EXPIRY_FACTOR });
  }

  /** Whether a process instance advertised recently. */
  isLive(instance: string, now = Date.now()): boolean {
    for (const { ad, expires } of this.entries.values()) if (ad.instance === instance && expires > now) return true;
    return false;
  }

  /** Live advertisements. */
  live(now = Date.now()): Advertisement[] {
    const out: Advertisement[] = [];
    for (const [key, e] of this.entries) {
      if (e.expires <= now) this.entries.delete(key);
      else out.push(e.ad);
    }
    return out;
  }

  /**
   * Where an event on `stream` goes: every live (runner, deployment) consuming it on `system`,
   * restricted to `meta.deployments` when set, and to those that offer the action@version.
   * A deployment that does not offer it is left out, so it never answers a FAIL that could win
   * the race against a deployment that does.
   */
  targets(system: string, stream: string, meta: RawEventMeta): { targets: Target[] } | { error: ErrorInfo } {
    const now = Date.now();
    const key = `${system}\0${stream}`;
    const hit = this.cache.get(meta)?.get(key);
    if (hit && hit.generation === this.generation && hit.until > now) return hit.answer;
    const answer = this.lookup(system, stream, meta, now);
    let until = Infinity;
    for (const e of this.entries.values()) if (e.expires > now && e.expires < until) until = e.expires;
    let byKey = this.cache.get(meta);
    if (!byKey) this.cache.set(meta, (byKey = new Map()));
    byKey.set(key, { generation: this.generation, until, answer });
    return answer;
  }

  private lookup(
    system: string,
    stream: string,
    meta: RawEventMeta,
    now: number,
  ): { targets: Target[] } | { error: ErrorInfo } {
    const byTarget = new Map<string, { target: Target; offered: boolean; why?: SagawayError }>();
    const allowed = meta.deployments;
    for (const ad of this.live(now)) {
      if (ad.system !== system || !Object.hasOwn(ad.streams, stream)) continue;
      if (allowed && !allowed.includes(ad.deployment)) continue;
      const key = `${ad.runner}\0${ad.deployment}`;
      const why = offerProblem(ad, stream, meta);
      const prev = byTarget.get(key);
      if (!prev || (!prev.offered && !why)) {
        byTarget.set(key, {
          target: { runner: ad.runner, deployment: ad.deployment },
          offered: !why,
          ...(why ? { why } : {}),
        });
      }
    }
    if (byTarget.size === 0) {
      const which = allowed ? ` (deployments ${allowed.join(', ')})` : '';
      return {
        error: toErrorInfo(
          new SagawayError('RUNNER_UNAVAILABLE', `no live runner consumes stream "${stream}"${which}`),
        ),
      };
    }
    const offered = [...byTarget.values()].filter((t) => t.offered).map((t) => t.target);
    if (offered.length === 0) return { error: toErrorInfo([...byTarget.values()][0]!.why) };
    return { targets: offered };
  }
}

/** Why a runner cannot run the event, when that can be told from its advertisement. */
function offerProblem(ad: Advertisement, stream: string, meta: RawEventMeta): SagawayError | undefined {
  const binding = ad.streams[stream]!;
  // Overrides, structural aliases and injected settings are resolved by the runner itself.
  if (binding.dynamic || meta.inject === true || ad.actions.includes(meta.action)) return undefined;
  const handler = meta.handler ?? binding.handler;
  if (handler === undefined) {
    return new SagawayError(
      'HANDLER_REQUIRED',
      `event "${meta.action}" names no handler and stream "${stream}" binds none`,
    );
  }
  const actions = Object.hasOwn(ad.handlers, handler) ? ad.handlers[handler] : undefined;
  if (!actions)
    return new SagawayError('HANDLER_NOT_FOUND', `no live runner on stream "${stream}" has handler "${handler}"`);
  const versions = Object.hasOwn(actions, meta.action) ? actions[meta.action] : undefined;
  if (!versions) return new SagawayError('ACTION_NOT_FOUND', `handler "${handler}" has no action "${meta.action}"`);
  if (!versions.includes(meta.version)) {
    return new SagawayError(
      'ACTION_VERSION_UNSUPPORTED',
      `no live runner on stream "${stream}" offers ${handler}.${meta.action}@${meta.version} (offered: ${versions.join(', ')})`,
    );
  }
  return undefined;
}

function isAdvertisement(v: unknown): v is Advertisement {
  return (
    isObject(v) &&
    v['v'] === 1 &&
    typeof v['instance'] === 'string' &&
    typeof v['runner'] === 'string' &&
    typeof v['deployment'] === 'string' &&
    typeof v['system'] === 'string' &&
    isObject(v['streams']) &&
    isObject(v['handlers']) &&
    Array.isArray(v['actions'])
  );
}
