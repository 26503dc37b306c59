import { pollKey } from './share.js';

/**
 * Where the poll groups of one gateway are found (group.ts), by the key of their next poll
 * (share.ts pollKey). The rules of joining live here: a stream only ever joins a group at a poll
 * boundary where the group's next poll is the stream's own next poll, so that every member gets
 * each entry exactly once and in order.
 */

/** The parameters every member of a group has in common. */
export interface GroupScope {
  runner: string;
  method: string;
  /** saga path (also what cursors are bound to) */
  path: string;
  input: Record<string, unknown>;
  query: Record<string, unknown>;
  /** cursor binding of the group's tokens (share.ts shareBinding) */
  binding: string;
  /** the group key without `previous` (share.ts shareBase); undefined: shares with nobody */
  base?: string;
  /** `all`: the saga runs with no user */
  anonymous: boolean;
}

/** Where a new group starts: the `previous` of its first poll and the entries of that batch already delivered. */
export interface GroupStart {
  previous?: unknown;
  skip: number;
}

/** What the registry asks of a group. */
export interface Joinable {
  /** whether a member may still join (the group has not stopped) */
  accepts(): boolean;
}

/** The keys a group holds in the registry, to release them (GroupRegistry.release). */
export interface GroupKeys {
  /** the next poll it sleeps until */
  waiting?: string | undefined;
  /** the first poll it runs */
  running?: string | undefined;
  /** the feed it leads (released only when the group stops) */
  lead?: string | undefined;
}

/** The groups of one gateway, by the key of their next poll. */
export class GroupRegistry<G extends Joinable> {
  /** groups asleep until their next poll: a member whose next poll has the same key may join */
  readonly waiting = new Map<string, G>();
  /** groups whose first-batch poll (skip 0) is in flight: a new connection without a cursor may join */
  readonly running = new Map<string, G>();
  /** per feed (group key without `previous`), the group whose poll times the others align to */
  readonly leads = new Map<string, G>();

  /** The group running the first poll of feed `base` that a new connection without a cursor may join. */
  firstPoll(base: string): G | undefined {
    const live = this.running.get(pollKey(base, undefined));
    return live?.accepts() ? live : undefined;
  }

  /** Record `group` as running the first poll `key`, unless another one is; true when recorded. */
  runFirstPoll(key: string, group: G): boolean {
    if (this.running.has(key)) return false;
    this.running.set(key, group);
    return true;
  }

  /** The group asleep until the poll `key`, which a stream whose next poll is `key` may join. */
  asleep(key: string): G | undefined {
    const g = this.waiting.get(key);
    return g?.accepts() ? g : undefined;
  }

  /** The other group asleep until the poll `key` that the members of `group` may move into. */
  sleeper(key: string, group: G): G | undefined {
    const other = this.waiting.get(key);
    return other !== undefined && other !== group && other.accepts() ? other : undefined;
  }

  /** Record `group` as asleep until the poll `key`: the streams of that poll may join it. */
  sleep(key: string, group: G): void {
    this.waiting.set(key, group);
  }

  /** The other group that leads feed `base` (the one `group` may align its polls to). */
  leadOf(base: string, group: G): G | undefined {
    const lead = this.leads.get(base);
    return lead !== undefined && lead !== group && lead.accepts() ? lead : undefined;
  }

  /** Make `group` the lead of feed `base`. */
  lead(base: string, group: G): void {
    this.leads.set(base, group);
  }

  /** Remove `group` under the keys it holds, where it is still the one registered there. */
  release(group: G, keys: GroupKeys): void {
    if (keys.lead !== undefined && this.leads.get(keys.lead) === group) this.leads.delete(keys.lead);
    if (keys.waiting !== undefined && this.waiting.get(keys.waiting) === group) this.waiting.delete(keys.waiting);
    if (keys.running !== undefined && this.running.get(keys.running) === group) this.running.delete(keys.running);
  }
}
