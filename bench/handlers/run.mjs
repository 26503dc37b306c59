#!/usr/bin/env node
// read.Get and write.Create through a saga, on memory, SQLite and PostgreSQL, measured side by
// side with the State call the handler makes and with the bare client call (a Map, a
// better-sqlite3 prepared statement, a pg query), in one process and one run.
//   npm run build && node bench/handlers/run.mjs [--seconds 0.5] [--rounds 5] [--only memory,sqlite,postgres]
//                                               [--pg-concurrency 1,16]
// PostgreSQL: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test); a table of its own,
// dropped at the end. Rows for PostgreSQL are skipped (and say so) when it cannot be reached.
// The three forms alternate within a round. Two costs of the saga path over the bare call: wall
// (bare ops/s ÷ saga ops/s) and CPU (this process's CPU time per op, saga ÷ bare; on PostgreSQL
// that leaves out the server's work, so it is the gateway-side cost only).
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { stringify } from 'yaml';
import { openSqlite } from '../../dist/src/states/sqlite-driver.js';
import { loadConfig } from '../../dist/src/config/load.js';
import { silentLogger } from '../../dist/src/core/logger.js';
import { BUILTIN_HANDLERS } from '../../dist/src/handlers/index.js';
import { Host } from '../../dist/src/runner/host.js';
import { createState } from '../../dist/src/states/index.js';
import { createCluster } from '../../dist/src/systems/index.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '0.5' },
    rounds: { type: 'string', default: '5' },
    only: { type: 'string', default: 'memory,sqlite,postgres' },
    'pg-concurrency': { type: 'string', default: '1,16' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const only = new Set(values.only.split(','));
const pgConcurrency = values['pg-concurrency'].split(',').map(Number);
const PG_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RECORDS = 1000;

/** The data of record `i`: a small document, as a CRUD API would store. */
const dataOf = (i) => ({ name: `item ${i}`, price: 10 + (i % 50), tags: ['a', 'b'], active: i % 2 === 0 });

const sagas = [
  {
    id: 'get-item',
    path: '/items/:id',
    methods: ['GET'],
    autoFail: true,
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'load' }] },
      {
        id: 'load',
        type: 'event',
        eventMeta: {
          handler: 'read',
          action: 'Get',
          version: 0,
          domain: 'items',
          inputElement: 'parameters',
          outputElement: '$.item',
        },
        links: [{ to: 'done' }],
      },
      { id: 'done', type: 'success', outputElement: 'item' },
    ],
  },
  {
    id: 'create-item',
    path: '/items',
    methods: ['POST'],
    autoFail: true,
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'create' }] },
      {
        id: 'create',
        type: 'event',
        eventMeta: {
          handler: 'write',
          action: 'Create',
          version: 0,
          domain: 'items',
          inputElement: 'parameters',
          outputElement: '$.item',
        },
        links: [{ to: 'done' }],
      },
      { id: 'done', type: 'success', http: 201, outputElement: 'item' },
    ],
  },
];

/** A host with one runner and one state `items`, loaded as `sagaway start` would; keeps the state. */
async function startHost(state) {
  const dir = await mkdtemp(join(tmpdir(), 'sagaway-bench-handlers-'));
  const file = join(dir, 'sagaway.yaml');
  await writeFile(
    file,
    stringify({ states: { items: state }, runners: { bench: { handlers: ['read', 'write'], sagas } } }),
  );
  const { settings } = await loadConfig(file, { env: {} });
  let items;
  const host = await Host.start({
    settings,
    log: silentLogger(),
    builtins: BUILTIN_HANDLERS,
    createState: (s, log) => {
      const made = createState(s, log);
      items = made;
      return made;
    },
    createCluster,
  });
  return {
    dir,
    state: items,
    runner: host.runners.get('bench'),
    async close() {
      await host.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The saga forms of the two operations. */
function sagaOps(runner) {
  const run = (method, path, input) =>
    runner.run({ method, path, input, query: {}, requestId: randomUUID(), user: null });
  return {
    async get(id) {
      const r = await run('GET', `/items/${id}`, {});
      if (r.outcome !== 'SUCCESS' || r.response.id !== id) throw new Error(`get: ${JSON.stringify(r)}`);
    },
    async create(id, data) {
      const r = await run('POST', '/items', { id, ...data });
      if (r.outcome !== 'SUCCESS' || r.http !== 201) throw new Error(`create: ${JSON.stringify(r)}`);
    },
  };
}

/** The State calls the read and write handlers make (Create with an idempotency key, as a step does). */
function stateOps(state) {
  return {
    async get(id) {
      const r = await state.get(id);
      if (r?.id !== id) throw new Error(`state get ${id}`);
    },
    async create(id, data) {
      await state.create(id, data, { idempotencyKey: `${randomUUID()}:create` });
    },
  };
}

/**
 * Calls `fn(i)` with i = 0, 1, 2... from `concurrency` loops for `seconds`. Returns calls per
 * second of wall time, and this process's CPU time (user + system, all threads) per call: on a
 * shared machine the first moves with other jobs' load, the second much less.
 */
async function measure(fn, concurrency, secs) {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const end = t0 + secs * 1000;
  let n = 0;
  const loop = async () => {
    while (performance.now() < end) for (let k = 0; k < 20; k++) await fn(n++);
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const cpu = process.cpuUsage(cpu0);
  return { rate: n / ((performance.now() - t0) / 1000), cpuUs: (cpu.user + cpu.system) / n };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

let measurement = 0;

/** The operation as a function of the call number; every Create of the run gets a new id. */
function opFn(ops, op) {
  if (op === 'get') return (i) => ops.get(`k${i % RECORDS}`);
  const prefix = `m${measurement++}`;
  return (i) => ops.create(`${prefix}-${i}`, dataOf(i));
}

/**
 * Bare, State and saga forms of one operation, alternating, `rounds` times. Rates and CPU per op
 * are medians of the rounds; each cost (saga ÷ bare) is the median of the per-round costs, whose
 * two sides were measured a second apart, so a load change moves both together.
 */
async function compare(forms, op, concurrency) {
  for (const ops of Object.values(forms)) await measure(opFn(ops, op), concurrency, 0.5); // warm-up (JIT)
  const runs = Object.fromEntries(Object.keys(forms).map((k) => [k, []]));
  const wall = [];
  const cpu = [];
  for (let r = 0; r < rounds; r++) {
    for (const [name, ops] of Object.entries(forms))
      runs[name].push(await measure(opFn(ops, op), concurrency, seconds));
    wall.push(runs.bare[r].rate / runs.saga[r].rate);
    cpu.push(runs.saga[r].cpuUs / runs.bare[r].cpuUs);
  }
  const out = {};
  for (const [name, v] of Object.entries(runs)) {
    out[name] = median(v.map((m) => m.rate));
    out[`${name}Cpu`] = median(v.map((m) => m.cpuUs));
  }
  const range = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
  return { ...out, wallCost: range(wall), cpuCost: range(cpu) };
}

async function seed(state) {
  for (let i = 0; i < RECORDS; i++) await state.create(`k${i}`, dataOf(i));
}

const rows = [];
const notes = [];

async function bench(label, h, bare, concurrencies = [1]) {
  await seed(h.state);
  const forms = { bare, state: stateOps(h.state), saga: sagaOps(h.runner) };
  for (const concurrency of concurrencies) {
    for (const op of ['get', 'create']) {
      const r = await compare(forms, op, concurrency);
      rows.push({ label, op: op === 'get' ? 'read.Get' : 'write.Create', concurrency, ...r });
      process.stderr.write(`${label} ${op} x${concurrency}: ${JSON.stringify(r)}\n`);
    }
  }
}

const started = performance.now();

if (only.has('memory')) {
  const h = await startHost({ type: 'memory' });
  const map = new Map();
  for (let i = 0; i < RECORDS; i++) map.set(`k${i}`, { id: `k${i}`, version: 1, data: dataOf(i) });
  const bare = {
    async get(id) {
      if (map.get(id)?.id !== id) throw new Error('map get');
    },
    async create(id, data) {
      if (map.has(id)) throw new Error('exists');
      map.set(id, { id, version: 1, data });
    },
  };
  try {
    await bench('memory', h, bare);
  } finally {
    await h.close();
  }
}

if (only.has('sqlite')) {
  const h0 = await mkdtemp(join(tmpdir(), 'sagaway-bench-sqlite-'));
  const file = join(h0, 'items.db');
  const h = await startHost({ type: 'sqlite', file, table: 'items' });
  // The bare client: its own connection to the same file and table, with the state's pragmas,
  // through the same driver the state uses on this Node (node:sqlite on 22.13+, better-sqlite3
  // on 20: better-sqlite3 12 aborts Node 24.19+ when GC collects a statement).
  const db = await openSqlite(file);
  db.exec('PRAGMA busy_timeout = 5000');
  db.exec('PRAGMA synchronous = NORMAL');
  const select = db.prepare('SELECT id, version, data FROM items WHERE id = ?');
  const insert = db.prepare('INSERT INTO items (id, version, data, created_at, updated_at) VALUES (?, 1, ?, ?, ?)');
  const bare = {
    async get(id) {
      const row = select.get(id);
      const rec = { id: row.id, version: row.version, data: JSON.parse(row.data) };
      if (rec.id !== id) throw new Error('sqlite get');
    },
    async create(id, data) {
      const now = new Date().toISOString();
      insert.run(id, JSON.stringify(data), now, now);
    },
  };
  try {
    await bench('sqlite (WAL, synchronous=NORMAL)', h, bare);
  } finally {
    db.close();
    await h.close();
    await rm(h0, { recursive: true, force: true });
  }
}

if (only.has('postgres')) {
  const table = `bench_items_${process.pid}`;
  const probe = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  probe.on('error', () => undefined);
  let reachable = true;
  try {
    await probe.connect();
    await probe.query('select 1');
  } catch (e) {
    reachable = false;
    notes.push(`PostgreSQL skipped: not reachable (${e.message})`);
  } finally {
    await probe.end().catch(() => undefined);
  }
  if (reachable) {
    const h = await startHost({ type: 'postgres', url: PG_URL, table, poolSize: 16 });
    // The bare client: its own pool of the same size on the same table.
    const pool = new pg.Pool({ connectionString: PG_URL, max: 16 });
    pool.on('error', () => undefined);
    const bare = {
      async get(id) {
        const r = await pool.query(`SELECT id, version, data FROM ${table} WHERE id = $1`, [id]);
        if (r.rows[0]?.id !== id) throw new Error('pg get');
      },
      async create(id, data) {
        await pool.query(`INSERT INTO ${table} (id, version, data) VALUES ($1, 1, $2::jsonb)`, [
          id,
          JSON.stringify(data),
        ]);
      },
    };
    try {
      await bench('postgres', h, bare, pgConcurrency);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS ${table}, ${table}_idem`).catch(() => undefined);
      await pool.end();
      await h.close();
    }
  }
}

const fmt = (n) => Math.round(n).toLocaleString('en-US');
const x = (c) => `${c.median.toFixed(2)}× [${c.min.toFixed(2)}–${c.max.toFixed(2)}]`;
console.log(
  `# ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB ` +
    `(${Math.round(freemem() / 2 ** 30)} free), Node ${process.version}, load average ${loadavg()[0].toFixed(1)}, ` +
    `${seconds}s x ${rounds} rounds, ${((performance.now() - started) / 1000).toFixed(0)}s in all`,
);
console.log('');
console.log(
  '| state | operation | in flight | ops/s: bare / State / saga | saga cost, wall (× bare) | client CPU µs/op: bare / State / saga | saga cost, CPU (× bare) |',
);
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(
    `| ${r.label} | ${r.op} | ${r.concurrency} | ${fmt(r.bare)} / ${fmt(r.state)} / ${fmt(r.saga)} | ${x(r.wallCost)} ` +
      `| ${r.bareCpu.toFixed(1)} / ${r.stateCpu.toFixed(1)} / ${r.sagaCpu.toFixed(1)} | ${x(r.cpuCost)} |`,
  );
}
for (const n of notes) console.log(`\n${n}`);
