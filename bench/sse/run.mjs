// Workloads "SSE" and "poll cost": sagaway's stream form against a hand-written node:http SSE
// server (the limit) and @fastify/sse 0.6, each in its own process, all serving the same
// backend (bench/sse/feed.mjs) with the same loop. The load generator is clients.mjs, in its own
// process.
//   idle streams   10,000 streams held open, server RSS growth per stream
//   delivery       events/s received by 1,000 clients of a feed that is polled again at once
//   latency        delay from a backend change (one every 100 ms) to its arrival at 100 clients
//                  polling every 50 ms
//   poll cost      1,000 clients on one path polling every 1 s: backend polls/s, server CPU/poll
/* global fetch, performance, clearTimeout */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { cpuMsOf, sleep, track } from '../lib/proc.mjs';
import { peerScript, ROOT, sagawayStart } from '../lib/servers.mjs';

const CLIENT = join(ROOT, 'bench', 'sse', 'clients.mjs');
const NOFILE = 20000;

/** Runs clients.mjs; `onLine` sees each JSON line (the last one is the result). */
function clients(args, onLine = () => {}) {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `ulimit -n ${NOFILE} && exec "$0" "$@"`, process.execPath, CLIENT, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    track(child);
    let last;
    let err = '';
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          last = JSON.parse(line);
        } catch {
          continue;
        }
        onLine(last, child);
      }
    });
    child.stderr.on('data', (d) => (err = (err + d).slice(-2000)));
    // No client run takes two minutes (connecting 10,000 streams takes seconds): a stuck one is killed.
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('exit', () => {
      clearTimeout(timer);
      if (last && !last.error) resolve(last);
      else reject(new Error(last?.error ?? (err || 'the SSE clients were stopped')));
    });
  });
}

const SERVERS = {
  sagaway: {
    start: () => sagawayStart('bench/sse/sagaway.yaml', { nofile: NOFILE }),
    path: (p) => `/api/stream${p}`,
    polls: async (s) => {
      const text = await (await fetch(`${s.base}/metrics`)).text();
      return Number(/^sagaway_stream_polls_total (\d+)/m.exec(text)?.[1]);
    },
  },
  'hand-written': {
    start: () => peerScript('sse-hand.mjs', '/stats', { nofile: NOFILE }),
    path: (p) => p,
    polls: async (s) => (await (await fetch(`${s.base}/stats`)).json()).polls,
  },
  '@fastify/sse': {
    start: () => peerScript('sse-fastify.mjs', '/stats', { nofile: NOFILE }),
    path: (p) => p,
    polls: async (s) => (await (await fetch(`${s.base}/stats`)).json()).polls,
  },
};

async function measure(name, def, opts) {
  const s = await def.start();
  const url = (p) => `${s.base}${def.path(p)}`;
  try {
    // Idle: RSS before and while 10,000 streams are open.
    await clients(['--url', url('/idle'), '--n', '100', '--mode', 'idle'], (line, child) => line.open && child.kill());
    await sleep(1000);
    const base = s.rss();
    let held = 0;
    let rss = NaN;
    await clients(['--url', url('/idle'), '--n', String(opts.idleStreams), '--mode', 'idle'], async (line, child) => {
      if (!line.open) return;
      held = line.open;
      await sleep(2000);
      rss = s.rss();
      child.kill();
    });
    opts.log(
      `  ${name}: ${held} idle streams, RSS ${(base / 2 ** 20).toFixed(0)} -> ${(rss / 2 ** 20).toFixed(0)} MiB`,
    );
    await sleep(1500);

    // Delivery: 1,000 clients, a feed polled again at once.
    let d0;
    const delivery = await clients(
      ['--url', `${url('/feed')}?start=START`, '--n', '1000', '--seconds', String(opts.seconds)],
      (line) => line.phase === 'measuring' && (d0 = cpuMsOf(s.pid)),
    );
    const cpuUsPerEvent = ((cpuMsOf(s.pid) - d0) * 1000) / delivery.events;
    opts.log(
      `  ${name}: ${Math.round(delivery.perSec)} events/s to 1,000 clients, ${cpuUsPerEvent.toFixed(1)} µs CPU/event`,
    );
    await sleep(1000);

    // Latency: 100 clients polling every 50 ms, a change every 100 ms.
    const latency = await clients([
      '--url',
      `${url('/changes')}?wait=50`,
      '--n',
      '100',
      '--mode',
      'latency',
      '--seconds',
      String(opts.seconds),
    ]);
    opts.log(
      `  ${name}: latency p50 ${latency.p50.toFixed(1)} ms, p99 ${latency.p99.toFixed(1)} ms (${latency.count} deliveries)`,
    );

    // Poll cost: 1,000 clients on one path, each polling every second.
    let p0;
    let c0;
    let t0;
    const cost = await clients(
      [
        '--url',
        `${url('/changes')}?wait=1000`,
        '--n',
        '1000',
        '--mode',
        'latency',
        '--seconds',
        String(opts.seconds),
        '--warmup',
        '2',
      ],
      async (line) => {
        if (line.phase !== 'measuring') return;
        t0 = performance.now();
        c0 = cpuMsOf(s.pid);
        p0 = await def.polls(s);
      },
    );
    const secs = (performance.now() - t0) / 1000;
    const cpuMs = cpuMsOf(s.pid) - c0;
    const polls = (await def.polls(s)) - p0;
    const pollsPerSec = polls / secs;
    const cpuUsPerPoll = (cpuMs * 1000) / polls;
    opts.log(
      `  ${name}: ${pollsPerSec.toFixed(0)} polls/s for 1,000 clients, ${cpuUsPerPoll.toFixed(0)} µs CPU per poll, latency p50 ${cost.p50.toFixed(0)} ms`,
    );
    return {
      held,
      kbPerStream: (rss - base) / held / 1024,
      eventsPerSec: delivery.perSec,
      cpuUsPerEvent,
      latency,
      pollsPerSec,
      cpuUsPerPoll,
      cpuPercent: cpuMs / 10 / secs,
    };
  } finally {
    await s.stop();
  }
}

/** Rows of the suite table for the SSE and poll-cost workloads. */
export async function sse(opts) {
  opts = { idleStreams: 10_000, ...opts };
  const r = {};
  for (const [name, def] of Object.entries(SERVERS)) r[name] = await measure(name, def, opts);
  const s = r.sagaway;
  const rows = [];
  for (const peer of ['hand-written', '@fastify/sse']) {
    const p = r[peer];
    rows.push(
      {
        workload: `SSE: idle streams held (of ${opts.idleStreams.toLocaleString('en-US')})`,
        metric: 'streams',
        sagaway: s.held,
        peer,
        peerValue: p.held,
        ratio: s.held / p.held,
        target: peer === 'hand-written' ? 1 : undefined,
      },
      {
        workload: 'SSE: memory per idle stream',
        metric: 'KB/stream',
        sagaway: s.kbPerStream,
        peer,
        peerValue: p.kbPerStream,
        ratio: p.kbPerStream / s.kbPerStream,
        target: undefined,
        ...(peer === 'hand-written' ? { absTarget: { text: '≤ 16 KB', met: s.kbPerStream <= 16 } } : {}),
      },
      {
        workload: 'SSE: events delivered to 1,000 clients',
        metric: 'events/s',
        sagaway: s.eventsPerSec,
        peer,
        peerValue: p.eventsPerSec,
        ratio: s.eventsPerSec / p.eventsPerSec,
        target: peer === 'hand-written' ? 0.7 : undefined,
        detail: `CPU/event ${s.cpuUsPerEvent.toFixed(1)} vs ${p.cpuUsPerEvent.toFixed(1)} µs; batches of 20, next poll at once`,
      },
      {
        workload: 'SSE: backend change → client (100 clients, 50 ms poll)',
        metric: 'ms p50',
        sagaway: s.latency.p50,
        peer,
        peerValue: p.latency.p50,
        ratio: p.latency.p50 / s.latency.p50,
        target: undefined,
        detail: `p99 ${s.latency.p99.toFixed(1)} vs ${p.latency.p99.toFixed(1)} ms`,
      },
      {
        workload: 'poll cost: 1,000 clients streaming one path (1 s poll)',
        metric: 'µs CPU/poll',
        sagaway: s.cpuUsPerPoll,
        peer,
        peerValue: p.cpuUsPerPoll,
        ratio: p.cpuUsPerPoll / s.cpuUsPerPoll,
        target: undefined,
        detail: `backend runs/s ${s.pollsPerSec.toFixed(0)} vs ${p.pollsPerSec.toFixed(0)}; server CPU ${s.cpuPercent.toFixed(0)}% vs ${p.cpuPercent.toFixed(0)}%`,
      },
    );
  }
  const order = (w) => rows.filter((x) => x.workload.startsWith(w));
  return ['SSE: idle', 'SSE: memory', 'SSE: events', 'SSE: backend', 'poll cost'].flatMap(order);
}
