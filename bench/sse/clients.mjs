#!/usr/bin/env node
// SSE load generator, in its own process: opens N streams to URL (at most 100 connecting at a
// time), then, by --mode:
//   idle     prints {"open":N} once all are open and holds them until it is killed
//   count    counts the events received during --seconds, prints {"events","perSec"}
//   latency  reads each event's `t` (when the backend made the change) and prints the delay to
//            its arrival here: {"count","p50","p99","max"} in ms over --seconds
// Events are counted by their blank-line terminator without parsing, so the client costs as
// little CPU as possible and the server stays the bottleneck. `CLIENT` in the URL becomes each
// stream's own number (streams that must not share a poll).
/* global performance, Buffer, setInterval */
import { get } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    n: { type: 'string', default: '1000' },
    mode: { type: 'string', default: 'count' },
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    connectMs: { type: 'string', default: '5000' },
  },
});
const n = Number(values.n);
// Feeds that flood (`start=` in the URL) begin once every client has had time to connect.
const url = values.url.replace('START', String(Date.now() + Number(values.connectMs)));
const now = () => performance.timeOrigin + performance.now();

const LF = 0x0a;
const LFLF = Buffer.from('\n\n');
let events = 0;
let counting = false;
const delays = [];
const open = [];

function connect(i) {
  return new Promise((resolve, reject) => {
    const req = get(
      url.replace('CLIENT', String(i)),
      { agent: false, headers: { accept: 'text/event-stream' } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new Error(`status ${res.statusCode}`));
        }
        let lastWasLf = false;
        let rest = '';
        res.on('data', (chunk) => {
          if (values.mode === 'count') {
            // Bytes, not text: no decoding, so that the client stays cheap.
            if (counting) {
              if (lastWasLf && chunk[0] === LF) events++;
              for (let i = chunk.indexOf(LFLF); i >= 0; i = chunk.indexOf(LFLF, i + 2)) events++;
            }
            lastWasLf = chunk[chunk.length - 1] === LF && chunk[chunk.length - 2] !== LF;
          } else if (values.mode === 'latency') {
            const at = now();
            rest += chunk.toString('utf8');
            let end;
            while ((end = rest.indexOf('\n\n')) >= 0) {
              const event = rest.slice(0, end);
              rest = rest.slice(end + 2);
              const d = event.indexOf('data: ');
              if (d >= 0 && counting) delays.push(at - JSON.parse(event.slice(d + 6)).t);
            }
          }
        });
        res.on('error', () => {});
        open.push(req);
        resolve();
      },
    );
    req.on('error', reject);
    req.setTimeout(60_000, () => req.destroy(new Error('timeout')));
  });
}

let failed = 0;
let firstError;
let next = 0;
async function worker() {
  while (next < n) {
    const i = next++;
    // A connection refused or reset while hundreds are opening (a full accept queue, which
    // gVisor's network stack answers with a refusal) is retried after a pause, up to 8 times.
    for (let attempt = 0; ; attempt++) {
      try {
        await connect(i);
        break;
      } catch (e) {
        if (attempt < 8) {
          await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
          continue;
        }
        failed++;
        firstError ??= e.message;
        break;
      }
    }
  }
}
await Promise.all(Array.from({ length: Math.min(100, n) }, worker));
for (const r of open) r.setTimeout(0);
if (failed) {
  console.log(JSON.stringify({ error: `${failed} of ${n} streams failed to open: ${firstError}` }));
  process.exit(1);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
if (values.mode === 'idle') {
  console.log(JSON.stringify({ open: open.length }));
  process.once('SIGTERM', () => process.exit(0));
  setInterval(() => {}, 1 << 30);
} else {
  const until = Number(new URL(url).searchParams.get('start'));
  if (until > Date.now()) await sleep(until - Date.now());
  await sleep(Number(values.warmup) * 1000);
  console.log(JSON.stringify({ phase: 'measuring' }));
  counting = true;
  const t0 = now();
  await sleep(Number(values.seconds) * 1000);
  counting = false;
  const secs = (now() - t0) / 1000;
  if (values.mode === 'count') {
    console.log(JSON.stringify({ open: open.length, events, perSec: events / secs }));
  } else {
    delays.sort((a, b) => a - b);
    const q = (p) => delays[Math.min(delays.length - 1, Math.floor(p * delays.length))];
    console.log(
      JSON.stringify({ open: open.length, count: delays.length, p50: q(0.5), p99: q(0.99), max: delays.at(-1) }),
    );
  }
  process.exit(0);
}
