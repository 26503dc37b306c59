/**
 * A long-poll client loop (docs/streams.md#long-poll): ask for the entries after `offset`, take
 * the next offset (and on a 204 the cursor) from the answer, until the feed ends.
 */

export interface Followed {
  entries: unknown[];
  end: boolean;
  /** requests made */
  requests: number;
  /** answers by status */
  statuses: Record<number, number>;
  /** X-Cache of each answer (the nginx test's cache status), by value */
  cache: Record<string, number>;
}

/** Follow the long-poll feed at `url` (`/api/stream/<path>`, with its own query) until it ends or `deadline`. */
export async function follow(
  url: string,
  opts: { headers?: Record<string, string>; deadline?: number; onEntry?: (entry: unknown) => void } = {},
): Promise<Followed> {
  const out: Followed = { entries: [], end: false, requests: 0, statuses: {}, cache: {} };
  let offset: string | undefined;
  let cursor: string | undefined;
  const deadline = opts.deadline ?? Date.now() + 60_000;
  while (!out.end && Date.now() < deadline) {
    const u = new URL(url);
    u.searchParams.set('live', 'long-poll');
    if (offset !== undefined) u.searchParams.set('offset', offset);
    if (cursor !== undefined) u.searchParams.set('cursor', cursor);
    const res = await fetch(u, { headers: opts.headers ?? {} });
    out.requests++;
    out.statuses[res.status] = (out.statuses[res.status] ?? 0) + 1;
    const x = res.headers.get('x-cache') ?? '-';
    out.cache[x] = (out.cache[x] ?? 0) + 1;
    if (res.status === 200) {
      const body = (await res.json()) as { list: unknown[]; offset: string; end: boolean };
      for (const e of body.list) {
        out.entries.push(e);
        opts.onEntry?.(e);
      }
      offset = body.offset;
      out.end = body.end;
    } else if (res.status === 204) {
      await res.arrayBuffer();
      offset = res.headers.get('stream-next-offset') ?? offset;
    } else {
      throw new Error(`long-poll answered ${res.status}: ${await res.text()}`);
    }
    cursor = res.headers.get('stream-cursor') ?? undefined;
  }
  return out;
}
