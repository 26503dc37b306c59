import type { GatewayMetrics } from '../http/helpers/metrics.js';
import type { Problem } from '../http/helpers/problem.js';
import type { StreamMember } from './member.js';

/**
 * Writing a poll's events to the members of a poll group (group.ts). Alone, a member gets them
 * with backpressure (member.ts send). Shared, the bytes are encoded once and written to every
 * member that has room for them; a member that has not gets what fits and is cut there, to go
 * on alone from that entry (the group detaches it: a shared group never waits for one member).
 */

/**
 * Write a batch (`events`, holding `entries` entries) to `members`. `cut` is told of each
 * member that took only the first `written` events; the member is still in the set then.
 */
export async function deliver(
  members: ReadonlySet<StreamMember>,
  events: string[],
  entries: number,
  metrics: GatewayMetrics,
  cut: (member: StreamMember, written: number) => void,
): Promise<void> {
  if (members.size === 1) {
    const [only] = members;
    if (await only!.send(events)) {
      metrics.entriesWritten.inc(entries);
      metrics.memberPolls.inc();
    }
    return;
  }
  const text = events.join('');
  if (text === '') {
    metrics.memberPolls.inc(members.size);
    return;
  }
  const bytes = Buffer.from(text, 'utf8');
  let served = 0;
  for (const m of [...members]) {
    if (bytes.length <= m.room) {
      m.write(bytes, events.length, bytes.length);
      served++;
      continue;
    }
    const j = writePrefix(m, events);
    metrics.entriesWritten.inc(Math.min(j, entries));
    cut(m, j);
  }
  metrics.entriesWritten.inc(entries * served);
  metrics.memberPolls.inc(served);
}

/** Write the events that fit in the member's room (at least one into an empty buffer); returns how many. */
function writePrefix(m: StreamMember, events: string[]): number {
  let room = m.room;
  let j = 0;
  let chunk = '';
  let bytes = 0;
  for (const ev of events) {
    const n = Buffer.byteLength(ev);
    if (n > room && !(j === 0 && m.res.writableLength === 0)) break;
    chunk += ev;
    bytes += n;
    room -= n;
    j++;
  }
  m.write(chunk, j, bytes);
  return j;
}

/** Send `problem` as `event: error` to every member (`endToken`: member.ts sendError), then end them. */
export function failAll(members: ReadonlySet<StreamMember>, problem: Problem, endToken: () => string): void {
  for (const m of [...members]) {
    m.sendError(problem, endToken);
    m.stop();
  }
}
