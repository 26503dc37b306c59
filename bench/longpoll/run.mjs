// Workload "long-poll" (issue 25): the long-poll form of one public feed (bench/sse's /changes,
// share: all, a change every ~100 ms, polled every 1 s), against the SSE form of the same feed.
//   through nginx  --shared-clients (10,000) long-poll clients through nginx (proxy_cache +
//                  proxy_cache_lock, src/testing/nginx.ts): saga runs/s and requests/s at the
//                  gateway, events/s delivered; the SSE form's events/s with as many clients
//   no cache       1,000 long-poll clients straight at the gateway: its CPU per delivered event,
//                  against 1,000 SSE clients'
/* global fetch, performance, clearTimeout */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { cpuMsOf, sleep, track } from '../lib/proc.mjs';
import { ROOT, sagawayStart } from '../lib/servers.mjs';

export const NOFILE = 20000;
export const LP = join(ROOT, 'bench', 'longpoll', 'clients.mjs');
export const SSE = join(ROOT, 'bench', 'sse', 'clients.mjs');

/** Run a load generator; `onLine` sees each JSON line; resolves with the last one. */
export function run(script, args, onLine = () => {}) {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `ulimit -n ${NOFILE} && exec "$0" "$@"`, process.execPath, script, ...args], {
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
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.once('exit', () => {
      clearTimeout(timer);
      if (last && !last.error && last.phase === undefined) resolve(last);
      else reject(new Error(last?.error ?? (err || 'the clients were stopped')));
    });
  });
}

async function metric(s, name) {
  const text = await (await fetch(`${s.base}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1]);
}

/** Run `script` against `url` with `n` clients, measuring the gateway `s` over the window. */
export async function measure(s, script, args) {
  let t0;
  let c0;
  let p0;
  let m0;
  const r = await run(script, args, async (line) => {
    if (line.phase !== 'measuring') return;
    t0 = performance.now();
    c0 = cpuMsOf(s.pid);
    p0 = await metric(s, 'sagaway_stream_polls_total');
    m0 = await metric(s, 'sagaway_stream_member_polls_total');
  });
  const secs = (performance.now() - t0) / 1000;
  const cpuMs = cpuMsOf(s.pid) - c0;
  const runs = (await metric(s, 'sagaway_stream_polls_total')) - p0;
  const answered = (await metric(s, 'sagaway_stream_member_polls_total')) - m0;
  return {
    ...r,
    runsPerSec: runs / secs,
    gatewayPerSec: answered / secs,
    eventsPerSec: r.events / secs,
    cpuUsPerEvent: (cpuMs * 1000) / r.events,
    cpuPercent: cpuMs / 10 / secs,
  };
}

/** Rows of the suite table for the long-poll workloads. */
export async function longpoll(opts) {
  const { startNginx } = await import(join(ROOT, 'dist', 'src', 'testing', 'nginx.js'));
  const n = opts.sharedClients ?? 10_000;
  const seconds = String(opts.seconds);
  const s = await sagawayStart('bench/sse/sagaway.yaml', { nofile: NOFILE });
  let nginx;
  try {
    nginx = await startNginx(s.port, { connections: n + 100 });
    const feed = (base) => `${base}/api/stream/changes?wait=1000`;
    const cached = await measure(s, LP, [
      '--url',
      feed(`http://127.0.0.1:${nginx.port}`),
      '--n',
      String(n),
      '--seconds',
      seconds,
    ]);
    opts.log(
      `  long-poll through nginx, ${n} clients: ${cached.runsPerSec.toFixed(2)} runs/s, ${cached.gatewayPerSec.toFixed(2)} requests/s at the gateway, ${Math.round(cached.eventsPerSec)} events/s, ${Math.round(cached.requestsPerSec)} requests/s at nginx, gateway CPU ${cached.cpuPercent.toFixed(0)}%`,
    );
    // nginx's warnings (worker_connections, open files) say why a run of many clients stalls
    const errors = (await nginx.errors()).trim().split('\n').filter(Boolean);
    if (errors.length)
      opts.log(`  nginx error log (${errors.length} lines, last 3):\n    ${errors.slice(-3).join('\n    ')}`);
    await nginx.stop();
    nginx = undefined;
    await sleep(2000);
    // the same behind two tiers (src/testing/nginx.ts's shield; both runs with proxy_cache_min_uses
    // 0, so that nginx's 10-bit uses counter wrapping every 1,024 requests does not pass its lock)
    nginx = await startNginx(s.port, { connections: n + 1000, shield: true });
    const shielded = await measure(s, LP, [
      '--url',
      feed(`http://127.0.0.1:${nginx.port}`),
      '--n',
      String(n),
      '--seconds',
      seconds,
    ]);
    opts.log(
      `  long-poll through nginx with a shield tier, ${n} clients: ${shielded.runsPerSec.toFixed(2)} runs/s, ${shielded.gatewayPerSec.toFixed(2)} requests/s at the gateway, ${Math.round(shielded.eventsPerSec)} events/s`,
    );
    await nginx.stop();
    nginx = undefined;
    await sleep(2000);
    const sseMany = await measure(s, SSE, [
      '--url',
      feed(s.base),
      '--n',
      String(n),
      '--seconds',
      seconds,
      '--warmup',
      '2',
    ]);
    opts.log(
      `  SSE, ${n} clients: ${sseMany.runsPerSec.toFixed(2)} runs/s, ${Math.round(sseMany.eventsPerSec)} events/s, ${sseMany.cpuUsPerEvent.toFixed(2)} µs CPU/event`,
    );
    await sleep(2000);
    const lpDirect = await measure(s, LP, ['--url', feed(s.base), '--n', '1000', '--seconds', seconds]);
    opts.log(
      `  long-poll, no cache, 1,000 clients: ${Math.round(lpDirect.eventsPerSec)} events/s, ${lpDirect.cpuUsPerEvent.toFixed(2)} µs CPU/event, ${lpDirect.runsPerSec.toFixed(2)} runs/s`,
    );
    await sleep(2000);
    const sseDirect = await measure(s, SSE, [
      '--url',
      feed(s.base),
      '--n',
      '1000',
      '--seconds',
      seconds,
      '--warmup',
      '2',
    ]);
    opts.log(
      `  SSE, 1,000 clients: ${Math.round(sseDirect.eventsPerSec)} events/s, ${sseDirect.cpuUsPerEvent.toFixed(2)} µs CPU/event`,
    );
    const N = n.toLocaleString('en-US');
    return [
      {
        workload: `long-poll through nginx: ${N} clients, one public feed (1 s poll)`,
        metric: 'saga runs/s',
        sagaway: cached.runsPerSec,
        peer: 'SSE form',
        peerValue: sseMany.runsPerSec,
        ratio: sseMany.runsPerSec / cached.runsPerSec,
        target: undefined,
        absTarget: { text: '≤ 2', met: cached.runsPerSec <= 2 },
        detail: `${cached.gatewayPerSec.toFixed(2)} requests/s reach the gateway (≤ 2: ${cached.gatewayPerSec <= 2 ? 'met' : 'not met'}); ${Math.round(cached.requestsPerSec)} requests/s at nginx`,
      },
      {
        workload: `long-poll through nginx: ${N} clients, one public feed (1 s poll)`,
        metric: 'events/s delivered',
        sagaway: cached.eventsPerSec,
        peer: 'SSE form',
        peerValue: sseMany.eventsPerSec,
        ratio: cached.eventsPerSec / sseMany.eventsPerSec,
        target: 1,
        detail: `gateway CPU ${cached.cpuPercent.toFixed(0)}% vs ${sseMany.cpuPercent.toFixed(0)}% (nginx and the clients share the machine)`,
      },
      {
        workload: `long-poll through nginx + shield tier: ${N} clients, one public feed (1 s poll)`,
        metric: 'requests/s at the gateway',
        sagaway: shielded.gatewayPerSec,
        peer: 'one tier',
        peerValue: cached.gatewayPerSec,
        ratio: cached.gatewayPerSec / shielded.gatewayPerSec,
        target: undefined,
        absTarget: { text: '≤ 2', met: shielded.gatewayPerSec <= 2 },
        detail: `${shielded.runsPerSec.toFixed(2)} saga runs/s; ${Math.round(shielded.eventsPerSec)} events/s delivered (${(shielded.eventsPerSec / sseMany.eventsPerSec).toFixed(2)}× SSE)`,
      },
      {
        workload: 'long-poll without a cache: 1,000 clients, one public feed (1 s poll)',
        metric: 'µs CPU/event',
        sagaway: lpDirect.cpuUsPerEvent,
        peer: 'SSE form',
        peerValue: sseDirect.cpuUsPerEvent,
        ratio: sseDirect.cpuUsPerEvent / lpDirect.cpuUsPerEvent,
        target: +(1 / 1.5).toFixed(2),
        detail: `events/s ${Math.round(lpDirect.eventsPerSec)} vs ${Math.round(sseDirect.eventsPerSec)}; ${Math.round(lpDirect.requestsPerSec)} requests/s`,
      },
    ];
  } finally {
    await nginx?.stop();
    await s.stop();
  }
}
