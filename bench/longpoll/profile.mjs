#!/usr/bin/env node
// Where a long-poll request's CPU goes (issue 25): `sagaway start` with bench/sse/sagaway.yaml
// under `node --cpu-prof`, --n long-poll clients of /changes?wait=1000 straight at it (no cache,
// bench/longpoll/clients.mjs), then the profile of the measured window read by
// bench/lib/cpuprofile.mjs: self time by area and the top functions, in µs per request.
//   npm run build && node bench/longpoll/profile.mjs [--n 1000] [--seconds 8] [--top 30] [--keep FILE]
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { analyse } from '../lib/cpuprofile.mjs';
import { cpuSplitOf, sleep } from '../lib/proc.mjs';
import { sagawayStart } from '../lib/servers.mjs';
import { LP, NOFILE, run } from './run.mjs';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '8' },
    top: { type: 'string', default: '30' },
    keep: { type: 'string' },
  },
});
const dir = mkdtempSync(join(tmpdir(), 'sagaway-lp-profile-'));
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const svc = await sagawayStart('bench/sse/sagaway.yaml', {
  nofile: NOFILE,
  nodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir],
});
let from;
let cpu0;
let r;
let window;
let cpu1;
try {
  r = await run(
    LP,
    ['--url', `${svc.base}/api/stream/changes?wait=1000`, '--n', values.n, '--seconds', values.seconds],
    (line) => {
      if (line.phase !== 'measuring') return;
      from = nowUs();
      cpu0 = cpuSplitOf(svc.pid);
    },
  );
  window = [from, nowUs()];
  cpu1 = cpuSplitOf(svc.pid);
} finally {
  await svc.stop();
}
let file;
for (let i = 0; i < 50 && !file; i++) {
  file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) await sleep(100);
}
if (!file) throw new Error(`no .cpuprofile in ${dir}`);
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
if (values.keep) copyFileSync(join(dir, file), values.keep);
rmSync(dir, { recursive: true, force: true });
const a = analyse(profile, window);
const requests = r.requests;
const cpuUs = ((cpu1.user + cpu1.sys - cpu0.user - cpu0.sys) * 1000) / requests;
const pct = (us) => `${((100 * us) / a.busyUs).toFixed(1)}%`;
const per = (us) => (us / requests).toFixed(2);
console.log(
  `${requests} requests, ${r.events} events (${(r.events / requests).toFixed(1)}/request); ${cpuUs.toFixed(1)} µs CPU/request (/proc), profile ${(a.busyUs / requests).toFixed(1)} µs busy/request; idle ${((100 * a.idleUs) / (a.idleUs + a.busyUs)).toFixed(0)}%`,
);
console.log('\n== self time by area (share of busy, µs/request)');
for (const x of a.areas) console.log(`${x.area.padEnd(40)} ${pct(x.us).padStart(6)} ${per(x.us).padStart(7)}`);
console.log(`\n== top ${values.top} functions by self time`);
for (const f of a.self.slice(0, Number(values.top)))
  console.log(`${pct(f.us).padStart(6)} ${per(f.us).padStart(6)}  ${f.name}  ${f.where}  [${f.area ?? 'native'}]`);
console.log('\n== sagaway functions by inclusive time');
for (const f of a.total.filter((f) => f.area?.startsWith('sagaway')).slice(0, Number(values.top)))
  console.log(`${pct(f.us).padStart(6)} ${per(f.us).padStart(6)}  ${f.name}  ${f.where}`);
