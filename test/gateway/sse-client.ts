import { EventSource } from 'eventsource';

/** An EventSource client for the stream tests: collects entries, the end event and error events. */

export interface Got {
  entries: Array<{ id: string; data: unknown }>;
  end?: { id: string; data: unknown };
  errors: unknown[];
  opens: number;
}

/** Open an EventSource and collect events until `end`, an `event: error` with data, or `until` says so. */
export function collect(
  url: string,
  init?: ConstructorParameters<typeof EventSource>[1],
  until?: (g: Got) => boolean,
): { es: EventSource; done: Promise<Got> } {
  const es = new EventSource(url, init);
  const got: Got = { entries: [], errors: [], opens: 0 };
  const done = new Promise<Got>((resolve) => {
    es.onopen = () => got.opens++;
    es.onmessage = (ev) => {
      got.entries.push({ id: ev.lastEventId, data: JSON.parse(ev.data) });
      if (until?.(got)) resolve({ ...got, entries: [...got.entries] });
    };
    es.addEventListener('end', (ev) => {
      got.end = { id: ev.lastEventId, data: JSON.parse(ev.data) };
      resolve(got);
    });
    es.addEventListener('error', (ev) => {
      const data = (ev as unknown as { data?: string }).data;
      if (data !== undefined) {
        got.errors.push(JSON.parse(data));
        es.close();
        resolve(got);
      }
    });
  });
  return { es, done };
}

export const ns = (g: Got) => g.entries.map((e) => (e.data as { n: number }).n);
export const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i);
