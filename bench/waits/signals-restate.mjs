#!/usr/bin/env node
// The peer of signals.mjs (issue 21, target 3): park and resume `--runs` runs on Restate 1.x
// awakeables (bench/peers/restate-awakeable.mjs), over HTTP like sagaway: each run is started
// through the ingress (`POST /waits/hold/send`), parks on an awakeable whose id it publishes,
// and is resumed by `POST /restate/awakeables/<id>/resolve`; done when its step after the wait
// ran. Throughput = runs ÷ the time from the first start to the last step after a wait.
// restate-server tries to reach GitHub when it starts, so like bench/remote/restate-netns.mjs
// this runs in its own network namespace with only a loopback interface:
//   unshare -n node bench/waits/signals-restate.mjs [--runs 1000] [--connections 50]
// Needs the peers installed: npm ci --prefix bench/peers
/* global fetch */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, startService } from '../lib/proc.mjs';
import { peerScript, ROOT } from '../lib/servers.mjs';
import { loadAverage, marks, until } from './setup.mjs';

const { values } = parseArgs({ options: { runs: { type: 'string' }, connections: { type: 'string' } } });
const RUNS = Number(values.runs ?? 1000);
const CONC = Number(values.connections ?? 50);
execFileSync('ip', ['link', 'set', 'lo', 'up']);

const base = mkdtempSync(join(tmpdir(), 'sagaway-waitbench-restate-'));
const log = join(base, 'marks.log');
appendFileSync(log, '');
const [fabric, ingress, admin, pgsql] = [await freePort(), await freePort(), await freePort(), await freePort()];
const servers = [];
const load0 = loadAverage();

/** `n` POSTs with CONC in flight; each must answer 2xx. */
async function postMany(n, urlOf, bodyOf) {
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= n) return;
      const res = await fetch(urlOf(i), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(bodyOf(i)),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${urlOf(i)}: ${res.status} ${text}`);
    }
  };
  await Promise.all(Array.from({ length: CONC }, worker));
}

/** Start `n` runs named `${tag}<i>`, resolve each awakeable once published; resolves with times. */
async function round(tag, n) {
  const t0 = Date.now();
  await postMany(
    n,
    () => `http://127.0.0.1:${ingress}/waits/hold/send`,
    (i) => `${tag}${i}`,
  );
  const ids = () => marks(log).filter((l) => l.id && l.run.startsWith(tag));
  await until(() => ids().length >= n, 5 * 60_000, 20);
  const t1 = Date.now();
  const published = ids();
  await postMany(
    n,
    (i) => `http://127.0.0.1:${ingress}/restate/awakeables/${published[i].id}/resolve`,
    () => true,
  );
  const t2 = Date.now();
  const done = () => marks(log).filter((l) => l.t && l.run.startsWith(tag));
  await until(() => done().length >= n, 5 * 60_000, 20);
  const t3 = Math.max(...done().map((l) => l.t));
  return { t0, t1, t2, t3 };
}

try {
  const server = await startService(
    'restate-server',
    join(ROOT, 'bench', 'peers', 'node_modules', '.bin', 'restate-server'),
    [
      '--config-file',
      join(ROOT, 'bench', 'peers', 'restate', 'restate.toml'),
      '--base-dir',
      base,
      '--listen-mode',
      'tcp',
      '--no-logo',
    ],
    {
      cwd: base,
      env: {
        DO_NOT_TRACK: '1',
        RESTATE_BIND_ADDRESS: `127.0.0.1:${fabric}`,
        RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
        RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
        RESTATE_ADMIN__QUERY_ENGINE__PGSQL_BIND_ADDRESS: `127.0.0.1:${pgsql}`,
      },
      probe: `http://127.0.0.1:${admin}/health`,
      timeoutMs: 60_000,
    },
  );
  servers.push(server);
  const service = await peerScript('restate-awakeable.mjs', '/', { probe: false, env: { WAITBENCH_LOG: log } });
  servers.push(service);
  let reg;
  for (let i = 0; i < 50 && !reg?.ok; i++) {
    if (i) await new Promise((res) => setTimeout(res, 200));
    reg = await fetch(`http://127.0.0.1:${admin}/deployments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ uri: `http://127.0.0.1:${service.port}` }),
    }).catch(() => undefined);
  }
  if (!reg?.ok) throw new Error(`registration failed: ${reg?.status} ${await reg?.text()}`);
  for (let i = 0; i < 50; i++) {
    const r = await fetch(`http://127.0.0.1:${ingress}/waits/hold/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '"probe"',
    }).catch(() => null);
    if (r?.ok) break;
    await new Promise((res) => setTimeout(res, 200));
  }
  await round('w', 50); // warm-up, not counted
  const cpu = () => server.cpuMs() + service.cpuMs();
  const cpu0 = cpu();
  const { t0, t1, t2, t3 } = await round('r', RUNS);
  console.log(
    JSON.stringify({
      runs: RUNS,
      connections: CONC,
      runsPerS: Math.round(RUNS / ((t3 - t0) / 1000)),
      parkPerS: Math.round(RUNS / ((t1 - t0) / 1000)),
      signalPerS: Math.round(RUNS / ((t2 - t1) / 1000)),
      lastResumeAfterLastSignalMs: t3 - t2,
      seconds: +((t3 - t0) / 1000).toFixed(2),
      cpuMsPerRun: +((cpu() - cpu0) / RUNS).toFixed(2),
      loadAverage: { start: load0, end: loadAverage() },
    }),
  );
} finally {
  for (const s of servers.reverse()) await s.stop();
  rmSync(base, { recursive: true, force: true });
}
