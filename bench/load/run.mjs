// Workload "load" (issue 19, bounded work per request): what one client sending the worst bodies
// within the limits costs the gateway.
// (a) CPU per MB of each worst body through sagaway (the todo example's create saga: parse,
//     check, store in SQLite, answer the record) next to fastify's own cost to parse the same
//     body, measured as the server process's CPU time over sequential requests.
// (b) /healthz p99 and max, probed from another process every 10 ms, while one anonymous
//     client sends worst bodies at its full rate quota (200 in 10 s) to the todo example as
//     `npm start` runs it, then lists everything it stored, page by page, at the same pace.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { freePort, sleep, startService, track } from '../lib/proc.mjs';
import { serverNode } from '../lib/runtime.mjs';
import { sagawayStart } from '../lib/servers.mjs';
import { BODIES } from './bodies.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const MB = 1024 * 1024;
const WORKLOAD = 'one client, worst bodies';
const JSON_HEADERS = { 'content-type': 'application/json' };

/** Rows of the suite table for this workload. */
export async function load(opts) {
  const dir = mkdtempSync(join(tmpdir(), 'sagaway-bench-load-'));
  const rows = [];
  const notes = [];
  try {
    rows.push(...(await cpuPerMb(dir, opts)));
    rows.push(...(await responsiveness(dir, opts, notes)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { rows, notes };
}

/** (a) CPU ms per MB of body, sagaway (stored and answered) next to fastify (parsed). */
async function cpuPerMb(dir, opts) {
  const requests = Math.max(10, Math.round(opts.seconds * 6));
  const servers = [];
  try {
    const sagaway = await sagawayStart('bench/load/sagaway.yaml', { env: { TODO_DB: join(dir, 'cpu.db') } });
    servers.push(sagaway);
    const port = await freePort();
    const fastify = await startService('fastify', serverNode(), [join(HERE, 'fastify-parse.mjs')], {
      env: { PORT: String(port) },
      probe: `http://127.0.0.1:${port}/healthz`,
    });
    servers.push(fastify);
    const agent = new Agent({ connections: 1 });
    const rows = [];
    for (const [name, [what, body]] of Object.entries(BODIES)) {
      const mb = Buffer.byteLength(body) / MB;
      const cost = async (srv, url) => {
        let status;
        for (let i = 0; i < 3; i++) status = await post(agent, url, body); // warm up
        const before = srv.cpuMs();
        const loop0 = loopCpuMs(srv.pid);
        for (let i = 0; i < requests; i++) status = await post(agent, url, body);
        const per = requests * mb;
        return { ms: (srv.cpuMs() - before) / per, loop: (loopCpuMs(srv.pid) - loop0) / per, status };
      };
      const s = await cost(sagaway, `${sagaway.base}/api/request/todos`);
      const f = await cost(fastify, `http://127.0.0.1:${port}/parse`);
      opts.log(
        `   ${name}: sagaway ${s.ms.toFixed(1)} ms/MB (event loop ${s.loop.toFixed(1)}; ${s.status.text}), fastify ${f.ms.toFixed(1)} ms/MB`,
      );
      rows.push({
        workload: `worst body: ${name}`,
        metric: 'CPU ms/MB',
        sagaway: s.ms,
        peer: 'fastify JSON parse',
        peerValue: f.ms,
        ratio: f.ms / s.ms,
        detail: `${what}, ${mb.toFixed(2)} MB; sagaway answered ${s.status.text}, of its CPU ${s.loop.toFixed(1)} ms/MB on the event loop's thread (fastify ${f.loop.toFixed(1)}); ${requests} requests each`,
      });
    }
    await agent.close();
    return rows;
  } finally {
    for (const s of servers) await s.stop();
  }
}

/** (b) /healthz while one client sends worst bodies at its full quota, then lists them. */
async function responsiveness(dir, opts, notes) {
  const sagaway = await sagawayStart('examples/todo/sagaway.yaml', { env: { TODO_DB: join(dir, 'todos.db') } });
  const agent = new Agent({ connections: 16 });
  try {
    // The machine's floor: the same probe against the same gateway, idle, just before.
    const idle = await probeFor(`${sagaway.base}/healthz`, 5000);
    const probe = spawn(serverNode(), [join(HERE, 'probe.mjs'), `${sagaway.base}/healthz`, '10'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    track(probe);
    let out = '';
    probe.stdout.on('data', (d) => (out += d));
    const probed = new Promise((r) => probe.once('exit', r));
    await sleep(500);
    const cpu0 = sagaway.cpuMs();
    const loop0 = loopCpuMs(sagaway.pid);
    const t0 = performance.now();
    // The todo example's rate: 200 requests per 10 s per client (gateway.limits.rate default).
    const quota = 200;
    const windowMs = 10_000;
    const kinds = Object.values(BODIES).map(([, body]) => body);
    const statuses = {};
    const sent = [];
    for (let i = 0; i < quota; i++) {
      await sleep(t0 + (i * windowMs) / quota - performance.now());
      sent.push(
        post(agent, `${sagaway.base}/api/request/todos`, kinds[i % kinds.length]).then((s) => {
          statuses[s.text] = (statuses[s.text] ?? 0) + 1;
        }),
      );
    }
    await Promise.all(sent);
    const postMs = performance.now() - t0;
    // The next window: list everything, page by page (`next` -> `previous`), at the same pace.
    await sleep(t0 + windowMs + 200 - performance.now());
    const t1 = performance.now();
    let previous;
    let pages = 0;
    let records = 0;
    let slowest = 0;
    for (let i = 0; i < quota; i++) {
      await sleep(t1 + (i * windowMs) / quota - performance.now());
      const q = previous === undefined ? '' : `?previous=${encodeURIComponent(previous)}`;
      const t = performance.now();
      const r = await request(`${sagaway.base}/api/request/todos${q}`, { dispatcher: agent });
      const page = await r.body.json();
      slowest = Math.max(slowest, performance.now() - t);
      if (r.statusCode !== 200) throw new Error(`list answered ${r.statusCode} ${page.code}`);
      pages++;
      records += page.list.length;
      previous = page.next;
      if (previous === undefined) break;
    }
    const cpuMs = sagaway.cpuMs() - cpu0;
    const loopMs = loopCpuMs(sagaway.pid) - loop0;
    const wallMs = performance.now() - t0;
    probe.kill('SIGTERM');
    await probed;
    const h = JSON.parse(out.trim().split('\n').at(-1));
    const detail =
      `${quota} POSTs in ${(postMs / 1000).toFixed(1)} s (${Object.entries(statuses)
        .map(([k, v]) => `${v}× ${k}`)
        .join(', ')}), then ${records} records listed in ${pages} pages (slowest ${Math.round(slowest)} ms);` +
      ` ${h.n} probes, ${h.over50} over 50 ms; server CPU ${Math.round((100 * cpuMs) / wallMs)}% of one core, its event loop's thread ${Math.round((100 * loopMs) / wallMs)}%`;
    opts.log(`   healthz ${JSON.stringify(h)}; ${detail}`);
    notes.push(
      `one client, worst bodies: the todo example as \`npm start\` runs it (SQLite file, default limits); bodies cycle through ${Object.keys(BODIES).join(', ')} (bench/load/bodies.mjs)`,
    );
    const workload = `${WORKLOAD} at full quota, then listed`;
    return [
      {
        workload,
        metric: 'ms healthz p99',
        sagaway: h.p99,
        peer: '—',
        absTarget: { text: '≤ 50 ms', met: h.p99 <= 50 },
        detail,
      },
      {
        workload,
        metric: 'ms healthz max',
        sagaway: h.max,
        peer: '—',
        absTarget: { text: '≤ 250 ms', met: h.max <= 250 },
        detail: `p50 ${h.p50} ms; the same probe against the idle gateway just before: p50 ${idle.p50}, p99 ${idle.p99}, max ${idle.max} ms (the machine's floor)`,
      },
    ];
  } finally {
    await agent.close();
    await sagaway.stop();
  }
}

/** CPU time of a process's main thread (its event loop), in ms (Linux /proc; the pid is its tid). */
function loopCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

/** Run probe.mjs against `url` for `ms`; resolves to its figures. */
async function probeFor(url, ms) {
  const probe = spawn(serverNode(), [join(HERE, 'probe.mjs'), url, '10'], { stdio: ['ignore', 'pipe', 'inherit'] });
  track(probe);
  let out = '';
  probe.stdout.on('data', (d) => (out += d));
  const done = new Promise((r) => probe.once('exit', r));
  await sleep(ms);
  probe.kill('SIGTERM');
  await done;
  return JSON.parse(out.trim().split('\n').at(-1));
}

/** POST a JSON body; resolves to { code, text } ("201", "413 TOO_MANY_VALUES"). */
async function post(agent, url, body) {
  const r = await request(url, { method: 'POST', headers: JSON_HEADERS, body, dispatcher: agent });
  const text = await r.body.text();
  let code = '';
  if (r.statusCode >= 400) {
    try {
      code = ` ${JSON.parse(text).code}`;
    } catch {
      // not problem+json: the status says enough
    }
  }
  return { code: r.statusCode, text: `${r.statusCode}${code}` };
}
