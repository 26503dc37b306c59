#!/usr/bin/env node
/* global fetch */
// The fault suite (issue 26), on demand: `npm run chaos` (builds, then runs this file).
//   node bench/chaos/run.mjs [--only replica,worker,gateway,nats,postgres] [--rate 60]
//                            [--seconds 20] [--fault-at 6] [--down 5] [--json FILE]
//   node bench/chaos/run.mjs --compare BEFORE.json AFTER.json   (tables side by side)
// Each scenario starts 2 gateways, 3 orchestrator replicas (runner `api`, journal and
// Idempotency-Key store in PostgreSQL) and a worker (runner `worker`) on a NATS server and a
// PostgreSQL cluster of the suite's own (free loopback ports, temporary folders), runs keyed
// load, kills (-9) one process of the scenario's kind at --fault-at and starts it again --down
// seconds later, lets the clients' retries end, and checks every order (check.mjs). Prints one
// table per scenario. Nothing here touches the machine's shared NATS or PostgreSQL.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { executions, figures, ledger, rows, runningInJournal } from './check.mjs';
import { sleep, Sagaway, startNats, startPostgres } from './cluster.mjs';
import { keyedLoad } from './load.mjs';
import { freePort } from '../lib/proc.mjs';
import { ROOT } from '../lib/servers.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const SCENARIOS = {
  replica: 'two orchestrator replicas (of 3) killed at once',
  worker: 'the worker killed',
  gateway: 'a gateway (1 of 2) killed',
  nats: 'the NATS server killed',
  postgres: 'PostgreSQL stopped (-m immediate)',
};
const { values } = parseArgs({
  options: {
    only: { type: 'string', default: Object.keys(SCENARIOS).join(',') },
    rate: { type: 'string', default: '60' },
    seconds: { type: 'string', default: '20' },
    'fault-at': { type: 'string', default: '6' },
    down: { type: 'string', default: '5' },
    json: { type: 'string' },
    compare: { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
const log = (line) => process.stderr.write(`${line}\n`);

/** A markdown table. */
function table(head, body) {
  const cell = (v) => String(v).replaceAll('|', '\\|');
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...body.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

if (values.compare) {
  const [before, after] = process.argv
    .slice(2)
    .filter((a) => !a.startsWith('--'))
    .map((f) => JSON.parse(readFileSync(f, 'utf8')));
  for (const name of Object.keys(after.scenarios)) {
    const a = after.scenarios[name];
    const b = before.scenarios[name];
    const br = b ? rows(b) : [];
    console.log(
      `\n**${name}**: ${a.what ?? SCENARIOS[name]} at ${after.opts.faultAt} s, started again ${after.opts.down} s later\n`,
    );
    console.log(
      table(
        ['', 'before', 'after'],
        rows(a).map(([k, v], i) => [k, br[i]?.[1] ?? '–', v]),
      ),
    );
  }
  process.exit(0);
}

const opts = {
  rate: Number(values.rate),
  seconds: Number(values.seconds),
  faultAt: Number(values['fault-at']),
  down: Number(values.down),
};
if (!existsSync(join(ROOT, 'dist', 'src', 'cli', 'main.js'))) throw new Error('build first: npm run build');
const only = values.only.split(',').map((s) => s.trim());
for (const s of only)
  if (!SCENARIOS[s]) throw new Error(`unknown scenario "${s}" (${Object.keys(SCENARIOS).join(', ')})`);
// bounded: past 20 minutes something is stuck
setTimeout(() => {
  log('the fault suite ran for 20 minutes: stopping');
  process.exit(1);
}, 20 * 60_000).unref();

function configFor(prefix, natsUrl, pgUrl) {
  const meta = (action) => ({
    handler: 'shop',
    action,
    version: 0,
    stream: 'shop',
    inputElement: 'parameters',
    outputElement: '-',
  });
  const pgState = (name) => ({ type: 'postgres', url: pgUrl, table: `${prefix}_${name}` });
  return {
    gateway: {
      host: '127.0.0.1',
      apis: [{ path: '/', runner: 'api', public: true }],
      limits: { timeout: '10s', rate: false },
      idempotency: { state: 'keys', maxKeysPerCaller: 1_000_000 },
      console: { enabled: false },
    },
    // ackWait 5s: a step cut off with its worker is redelivered within the saga's timeout
    systems: { bus: { type: 'nats', servers: [natsUrl], prefix, ackWait: '5s' } },
    defaultSystem: 'bus',
    states: { jr: pgState('journal'), ledger: pgState('ledger'), keys: pgState('keys') },
    runners: {
      api: {
        journal: 'jr',
        sagas: [
          {
            id: 'order',
            path: '/order',
            methods: ['POST'],
            steps: [
              { id: 'start', type: 'start', links: [{ to: 'reserve' }] },
              {
                id: 'reserve',
                type: 'event',
                eventMeta: meta('Reserve'),
                // the undo's own retry: a worker that is down for a few seconds does not leave
                // the order reserved (the unwind's budget is the saga's timeout)
                compensate: {
                  eventMeta: meta('Release'),
                  retry: { attempts: 20, backoff: '250ms', maxBackoff: '1s', on: ['FAIL', 'TIMEOUT'] },
                },
                links: [
                  { to: 'charge', when: ['SUCCESS'] },
                  { to: 'failed', when: ['*'] },
                ],
              },
              {
                id: 'charge',
                type: 'event',
                eventMeta: meta('Charge'),
                links: [
                  { to: 'ok', when: ['SUCCESS'] },
                  { to: 'failed', when: ['*'] },
                ],
              },
              { id: 'ok', type: 'success', http: 201 },
              { id: 'failed', type: 'fail', error: { code: 'ORDER_FAILED', http: 502 } },
            ],
          },
        ],
      },
      worker: { handlers: [join(HERE, 'shop-handler.mjs')], streams: { shop: { handler: 'shop' } } },
    },
  };
}

async function scenario(name, nats, pg) {
  const prefix = `chaos${name}${Date.now().toString(36)}`;
  const execLog = join(ROOT, '.tmp', `${prefix}.log`);
  const cluster = await Sagaway.create(configFor(prefix, nats.url, pg.url), { CHAOS_LOG: execLog });
  const ports = [await freePort(), await freePort()];
  const worker = cluster.add('worker', ['runner', '--runner', 'worker']);
  const replicas = [1, 2, 3].map((i) => cluster.add(`api${i}`, ['runner', '--runner', 'api']));
  const gateways = ports.map((p, i) => cluster.add(`gateway${i + 1}`, ['gateway', '--port', String(p)]));
  const pgc = new (await import('pg')).default.Client({ connectionString: pg.url });
  try {
    await worker.start();
    await Promise.all(replicas.map((r) => r.start()));
    await Promise.all(gateways.map((g) => g.start()));
    const urls = ports.map((p) => `http://127.0.0.1:${p}`);
    // ready when each gateway runs an order (runners are found through their advertisements)
    for (const url of urls) {
      for (let i = 0; ; i++) {
        const r = await fetch(`${url}/api/request/order`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ order: `probe-${i}` }),
        }).catch(() => undefined);
        if (r?.status === 201) break;
        if (i > 100) throw new Error(`${url} never ran an order`);
        await sleep(200);
      }
    }
    // two replicas at once: twice the runs cut off mid-flight, one survivor to take them over
    const targets = { replica: replicas.slice(0, 2), worker: [worker], gateway: [gateways[0]] }[name] ?? [];
    const fault = {
      kill: () =>
        name === 'nats'
          ? nats.proc.kill()
          : name === 'postgres'
            ? pg.stop('immediate')
            : Promise.all(targets.map((t) => t.kill())),
      heal: () =>
        name === 'nats'
          ? nats.proc.start()
          : name === 'postgres'
            ? pg.start()
            : Promise.all(targets.map((t) => t.start())),
    };
    log(
      `== ${name}: ${opts.rate} orders/s for ${opts.seconds} s; fault at ${opts.faultAt} s, healed ${opts.down} s later`,
    );
    const t0 = Date.now() + 200;
    const times = {};
    const faults = (async () => {
      await sleep(t0 + opts.faultAt * 1000 - Date.now());
      await fault.kill();
      times.down = ((Date.now() - t0) / 1000).toFixed(1);
      log(`  ${name} down at ${times.down} s`);
      await sleep(t0 + (opts.faultAt + opts.down) * 1000 - Date.now());
      await fault.heal();
      // a process started on a loaded machine takes its time: when it was ready again
      times.up = ((Date.now() - t0) / 1000).toFixed(1);
      log(`  ${name} up again at ${times.up} s`);
    })();
    const orders = await keyedLoad({ gateways: urls, rate: opts.rate, seconds: opts.seconds, drainMs: 25_000, t0 });
    await faults;
    log(`  load done at ${((Date.now() - t0) / 1000).toFixed(1)} s; waiting for the journal to settle`);
    await pgc.connect();
    const keys = new Set(orders.map((o) => o.key));
    let leftRunning = 0;
    for (let i = 0; i < 60; i++) {
      leftRunning = await runningInJournal(pgc, `${prefix}_journal`, keys);
      if (leftRunning === 0) break;
      await sleep(500);
    }
    const f = await figures({
      orders,
      exec: await executions(execLog),
      effects: await ledger(pgc, `${prefix}_ledger`),
      gateway: urls[1],
      faultAt: opts.faultAt,
      loadSeconds: opts.seconds,
      leftRunning,
    });
    return { ...f, times, what: SCENARIOS[name] };
  } finally {
    await pgc.end().catch(() => undefined);
    const logs = join(ROOT, '.tmp', prefix);
    await mkdir(logs, { recursive: true });
    await cluster.stop(logs);
    log(`  logs: ${logs}`);
  }
}

await mkdir(join(ROOT, '.tmp'), { recursive: true });
const nats = await startNats();
const pg = await startPostgres();
const results = { date: new Date().toISOString(), opts, scenarios: {} };
try {
  for (const name of only) {
    try {
      const f = await scenario(name, nats, pg);
      results.scenarios[name] = f;
      console.log(`\n**${name}**: ${SCENARIOS[name]} at ${opts.faultAt} s, started again ${opts.down} s later\n`);
      console.log(table(['', name], rows(f)));
    } catch (err) {
      log(`scenario ${name} failed: ${err.stack ?? err}`);
    }
  }
} finally {
  await nats.destroy();
  await pg.destroy();
}
if (values.json) writeFileSync(values.json, JSON.stringify(results, null, 2));
