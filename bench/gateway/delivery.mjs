#!/usr/bin/env node
// Events per second delivered to many SSE clients: the gateway's stream form (a saga whose event
// step returns 20 entries with `continue: true`, polled again after minWait = 1 ms) versus a
// minimal hand-written Node SSE server that writes the same 20 events, waits for drain, sleeps
// 1 ms and repeats. Reports events/s received by the clients and server CPU time per event.
//   npm run build && node bench/gateway/delivery.mjs [--clients 1000] [--seconds 5] [--rounds 2]
import { performance } from 'node:perf_hooks';
import { connect } from 'node:net';
import { parseArgs } from 'node:util';
import { startServer } from './spawn.mjs';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
  },
});
const clients = Number(values.clients);
const seconds = Number(values.seconds);

/** Open `clients` streams on `path`, count `data:` lines for `seconds`, close them. */
async function measure(server, path) {
  let events = 0;
  let counting = false;
  const sockets = [];
  await Promise.all(
    Array.from(
      { length: clients },
      () =>
        new Promise((resolve, reject) => {
          const s = connect(server.port, '127.0.0.1', () => s.write(`GET ${path} HTTP/1.1\r\nHost: bench\r\n\r\n`));
          s.setEncoding('utf8');
          s.once('data', () => resolve());
          s.on('data', (chunk) => {
            if (!counting) return;
            let at = chunk.indexOf('\ndata: ');
            while (at >= 0) {
              events++;
              at = chunk.indexOf('\ndata: ', at + 7);
            }
          });
          s.on('error', reject);
          sockets.push(s);
        }),
    ),
  );
  await new Promise((r) => setTimeout(r, 1000)); // warm up
  const cpu0 = await server.cpu();
  counting = true;
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  counting = false;
  const elapsed = (performance.now() - t0) / 1000;
  const cpu1 = await server.cpu();
  for (const s of sockets) s.destroy();
  await new Promise((r) => setTimeout(r, 500));
  return { eventsPerSecond: Math.round(events / elapsed), serverCpuUsPerEvent: +((cpu1 - cpu0) / events).toFixed(2) };
}

const sagaway = await startServer('sagaway');
const hand = await startServer('sse');
const rows = [];
for (let i = 0; i < Number(values.rounds); i++) {
  const s = await measure(sagaway, '/api/stream/feed');
  const h = await measure(hand, '/');
  rows.push({
    round: i + 1,
    sagawayEps: s.eventsPerSecond,
    handEps: h.eventsPerSecond,
    ratio: +(s.eventsPerSecond / h.eventsPerSecond).toFixed(3),
    sagawayCpuUsPerEvent: s.serverCpuUsPerEvent,
    handCpuUsPerEvent: h.serverCpuUsPerEvent,
  });
}
console.table(rows);
const avg = (k) => rows.reduce((a, r) => a + r[k], 0) / rows.length;
console.log(
  JSON.stringify({
    bench: 'delivery',
    node: process.version,
    clients,
    seconds,
    sagawayEventsPerSecond: Math.round(avg('sagawayEps')),
    handWrittenEventsPerSecond: Math.round(avg('handEps')),
    ratio: +(avg('sagawayEps') / avg('handEps')).toFixed(3),
    cpuUsPerEvent: {
      sagaway: +avg('sagawayCpuUsPerEvent').toFixed(2),
      handWritten: +avg('handCpuUsPerEvent').toFixed(2),
    },
  }),
);
sagaway.stop();
hand.stop();
