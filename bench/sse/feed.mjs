// The backend of the SSE workloads, shared by sagaway's handler and the peers so that every
// server does the same work per poll:
//   page(previous)   a fixed batch of 20 entries and the cursor after it (throughput)
//   since(previous)  the changes after cursor `previous` (latency, poll cost); a change is made
//                    every CHANGE_MS by a timer in the server's own process, stamped with the
//                    wall-clock time it was made, so a client can tell how late it saw it
/* global performance */

/** The entries one page sends. */
export const PAGE = Array.from({ length: 20 }, (_, i) => ({ id: i, title: `entry ${i}`, done: i % 3 === 0 }));

/** How often the backend changes, on average (each gap is random in 0.5..1.5 times this, so that
 * changes fall at every phase of a poll loop and the measured delay is not an artefact of two
 * timers in step). */
export const CHANGE_MS = 100;

/** Backend calls so far (a poll = one call), for the poll-cost workload. */
export const counters = { polls: 0 };

/**
 * One page: the same 20 entries, the cursor after them, and the pause before the next poll: none,
 * except before `start` (epoch ms), when nothing is sent and the pause lasts until then. The load
 * generator sets `start` a few seconds ahead so that all its clients are connected before the
 * flood begins (a server busy writing to the first clients accepts the next ones slowly).
 */
export function page(previous, start) {
  counters.polls++;
  const early = Number(start) - Date.now();
  if (early > 0) return { list: [], next: previous, wait: early };
  return { list: PAGE, next: (Number(previous) || 0) + PAGE.length, wait: 0 };
}

const changes = [];
let seq = 0;
let timer;
function startChanges() {
  timer = setTimeout(
    () => {
      changes.push({ seq: ++seq, t: performance.timeOrigin + performance.now() });
      if (changes.length > 100) changes.shift();
      startChanges();
    },
    CHANGE_MS * (0.5 + Math.random()),
  );
  timer.unref();
}

/** The changes after `previous` (none on the first poll: a new client starts from now). */
export function since(previous) {
  if (!timer) startChanges();
  counters.polls++;
  const from = previous === undefined || previous === null || previous === '' ? seq : Number(previous);
  const list = from >= seq ? [] : changes.filter((c) => c.seq > from);
  return { list, next: seq };
}
