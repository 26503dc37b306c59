#!/usr/bin/env node
// The Restate 1.x measurement, run by run.mjs inside its own network namespace
// (`unshare -n`): restate-server tries to reach GitHub when it starts, and in a namespace that
// has only a loopback interface that attempt fails at once without a packet leaving the machine.
// So the server, the service, and the load generator all run in here, and the result is printed
// as one JSON line. NATS and Redis are not reachable from in here, which Restate does not need.
//   unshare -n node bench/remote/restate-netns.mjs --seconds 5 --rounds 3 --connections 50
/* global fetch */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { httpLoad } from '../lib/load.mjs';
import { cpuMsOf, freePort, startService } from '../lib/proc.mjs';
import { peerScript, ROOT } from '../lib/servers.mjs';
import { items } from '../lib/items.cjs';

const { values } = parseArgs({
  options: { seconds: { type: 'string' }, rounds: { type: 'string' }, connections: { type: 'string' } },
});
execFileSync('ip', ['link', 'set', 'lo', 'up']);

const base = mkdtempSync(join(tmpdir(), 'sagaway-bench-restate-'));
const [fabric, ingress, admin, pgsql] = [await freePort(), await freePort(), await freePort(), await freePort()];
const servers = [];
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
  // The SDK's endpoint speaks HTTP/2 only: probe it through the server's registration instead.
  const service = await peerScript('restate-service.mjs', '/', { probe: false });
  servers.push(service);
  let reg;
  for (let i = 0; i < 50 && !reg?.ok; i++) {
    if (i) await new Promise((res) => setTimeout(res, 200));
    reg = await fetch(`http://127.0.0.1:${admin}/deployments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ uri: `http://127.0.0.1:${service.port}` }),
    });
  }
  if (!reg.ok) throw new Error(`registration failed: ${reg.status} ${await reg.text()}`);
  const url = `http://127.0.0.1:${ingress}/items/get`;
  let answer;
  for (let i = 0; i < 50 && answer === undefined; i++) {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '"42"' }).catch(
      () => null,
    );
    if (r?.ok) answer = await r.json();
    else await new Promise((res) => setTimeout(res, 200));
  }
  // Equal work: the same item as every other server answers.
  if (JSON.stringify(answer) !== JSON.stringify(items.get('42')))
    throw new Error(`Restate answered ${JSON.stringify(answer)}`);
  const load = { connections: Number(values.connections), method: 'POST', body: '"42"' };
  await httpLoad(url, { ...load, seconds: 2 });
  const runs = [];
  for (let r = 0; r < Number(values.rounds); r++) {
    const cpu = () => cpuMsOf(server.pid) + cpuMsOf(service.pid);
    const before = cpu();
    const res = await httpLoad(url, { ...load, seconds: Number(values.seconds) });
    res.cpuUs = ((cpu() - before) * 1000) / res.total;
    runs.push(res);
  }
  runs.sort((a, b) => a.rps - b.rps);
  const mid = runs[Math.floor(runs.length / 2)];
  console.log(
    JSON.stringify({ rps: mid.rps, p99: mid.p99, cpuUs: mid.cpuUs, all: runs.map((x) => Math.round(x.rps)) }),
  );
} finally {
  for (const s of servers.reverse()) await s.stop();
  rmSync(base, { recursive: true, force: true });
}
