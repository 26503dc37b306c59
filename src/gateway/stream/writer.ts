/**
 * The SSE wire format (DESIGN §7). Data is split on every CR, LF and CRLF into `data:` lines, so
 * no text can start a new field or event; `id` and `event` values lose any CR, LF and NUL. Entries
 * are compact JSON, which never holds a raw line break, so they travel as one `data:` line and
 * come back byte for byte.
 */

const LINE_BREAK = /\r\n|\r|\n/;
const FIELD_UNSAFE = /[\r\n\0]/g;

/** One SSE event. */
export interface SseEvent {
  id?: string;
  event?: string;
  /** reconnection time for the client, in milliseconds */
  retry?: number;
  data: string;
}

/** Serialise an event, ending with the blank line that dispatches it. */
export function formatEvent(ev: SseEvent): string {
  let out = '';
  if (ev.event !== undefined) out += 'event: ' + ev.event.replace(FIELD_UNSAFE, '') + '\n';
  if (ev.id !== undefined) out += 'id: ' + ev.id.replace(FIELD_UNSAFE, '') + '\n';
  if (ev.retry !== undefined && Number.isSafeInteger(ev.retry) && ev.retry >= 0) out += 'retry: ' + ev.retry + '\n';
  // A data line may start with a space: the parser strips only the one after the colon.
  if (LINE_BREAK.test(ev.data)) {
    for (const line of ev.data.split(LINE_BREAK)) out += 'data: ' + line + '\n';
  } else {
    out += 'data: ' + ev.data + '\n';
  }
  return out + '\n';
}

/** A comment line (`: text`), ignored by clients; used for heartbeats. */
export function formatComment(text: string): string {
  return ': ' + text.replace(FIELD_UNSAFE, ' ') + '\n\n';
}

/** An entry of a stream's list as event data: compact JSON (`null` for undefined). */
export function entryData(entry: unknown): string {
  return JSON.stringify(entry) ?? 'null';
}

/**
 * The events of entries `from..end-1` of a poll's list, with ids from `id`, or undefined when
 * they pass `max` bytes (`gateway.limits.maxResponse`; formatting stops there, so an oversized
 * poll costs at most the budget in text).
 */
export function formatEntries(
  list: readonly unknown[],
  from: number,
  end: number,
  id: (i: number) => string,
  max: number,
): string[] | undefined {
  const events: string[] = [];
  let units = 0;
  for (let i = from; i < end; i++) {
    const event = formatEvent({ id: id(i), data: entryData(list[i]) });
    units += event.length;
    // UTF-16 code units never exceed UTF-8 bytes: past the budget in units is past it in bytes
    if (units > max) return undefined;
    events.push(event);
  }
  if (units * 3 > max) {
    let bytes = 0;
    for (const event of events) bytes += Buffer.byteLength(event, 'utf8');
    if (bytes > max) return undefined;
  }
  return events;
}
