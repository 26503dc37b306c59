// What the fault suite checks after a scenario, from the orders' answers, the worker's log of
// executions, the ledger of effects and /api/status (see bench/chaos/README.md for each column).
/* global fetch */
import { readFile } from 'node:fs/promises';

/** Lines of the worker's execution log: { k: step idempotency key, o: order, s: step }. */
export async function executions(file) {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return undefined;
      }
    })
    .filter(Boolean);
}

/** order -> step -> Set(run ids) of the effects in the ledger. */
export async function ledger(client, table) {
  const r = await client.query(`select data from "${table}"`);
  const byOrder = new Map();
  for (const { data } of r.rows) {
    const steps = byOrder.get(data.order) ?? new Map();
    byOrder.set(data.order, steps);
    const runs = steps.get(data.step) ?? new Set();
    steps.set(data.step, runs);
    runs.add(data.run);
  }
  return byOrder;
}

/** Load orders still RUNNING in the journal. */
export async function runningInJournal(client, table, keys) {
  const r = await client.query(`select data->'input'->>'order' as o from "${table}" where data->>'status' = 'RUNNING'`);
  return r.rows.filter((row) => keys.has(row.o)).length;
}

/** The status of a run at a gateway: { http, body } or { error }. */
async function statusOf(gateway, runId) {
  try {
    const res = await fetch(`${gateway}/api/status/${encodeURIComponent(runId)}`);
    return { http: res.status, body: await res.json().catch(() => ({})) };
  } catch (err) {
    return { error: String(err) };
  }
}

/** An answer whose outcome is unknown when it is sent (the run may go on): 503, 504, no answer. */
const UNKNOWN = new Set([0, 502, 503, 504]);

/**
 * The scenario's figures. `orders` from load.mjs; `exec` executions; `effects` the ledger;
 * `gateway` one that is up, for /api/status.
 */
export async function figures({ orders, exec, effects, gateway, faultAt, loadSeconds, leftRunning }) {
  const f = {
    sent: orders.length,
    ok: 0,
    errors: {},
    noAnswer: 0,
    retried: 0,
    lost: 0,
    duplicated: 0,
    ranTwice: 0,
    halfDone: 0,
    mismatches: 0,
    mismatchExamples: [],
    leftRunning,
    reExecuted: 0,
    tries: {},
    recovery: 0,
  };
  // executions: per step key, and the runs each order started
  const perKey = new Map();
  const runsOf = new Map();
  for (const e of exec) {
    perKey.set(e.k, (perKey.get(e.k) ?? 0) + 1);
    const runs = runsOf.get(e.o) ?? new Set();
    runsOf.set(e.o, runs);
    runs.add(String(e.k).split(':')[0]);
  }
  const keys = new Set(orders.map((o) => o.key));
  for (const [k, n] of perKey) if (n > 1 && keys.has(exec.find((e) => e.k === k)?.o)) f.reExecuted++;

  const checks = [];
  for (const o of orders) {
    if (o.tries.length > 1) f.retried++;
    for (const t of o.tries) f.tries[t.code] = (f.tries[t.code] ?? 0) + 1;
    const steps = effects.get(o.key) ?? new Map();
    const fin = o.final;
    if (!fin) f.noAnswer++;
    else if (fin.status >= 200 && fin.status < 300) {
      f.ok++;
      if (!steps.has('reserve') || !steps.has('charge')) f.lost++;
    } else f.errors[`${fin.status} ${fin.code}`] = (f.errors[`${fin.status} ${fin.code}`] ?? 0) + 1;
    if ([...steps.values()].some((runs) => runs.size > 1)) f.duplicated++;
    if ((runsOf.get(o.key)?.size ?? 0) > 1) f.ranTwice++;
    for (const run of steps.get('reserve') ?? []) {
      if (!steps.get('charge')?.has(run) && !steps.get('release')?.has(run)) {
        f.halfDone++;
        break;
      }
    }
    // A replayed answer comes from the key's run, which another request (an earlier try) started:
    // it is checked against that run's status (the one run whose steps the order's effects name).
    const ran = [...(runsOf.get(o.key) ?? [])];
    const runId = fin?.replayed && ran.length === 1 ? ran[0] : fin?.runId;
    if (runId && !UNKNOWN.has(fin.status)) checks.push({ o, fin: { ...fin, runId } });
  }
  // every final answer against /api/status (a few at a time)
  for (let i = 0; i < checks.length; i += 20) {
    await Promise.all(
      checks.slice(i, i + 20).map(async ({ fin }) => {
        const s = await statusOf(gateway, fin.runId);
        const b = s.body ?? {};
        const agrees = s.http === 200 && b.status === 'DONE' && b.http === fin.status;
        if (!agrees) {
          f.mismatches++;
          if (f.mismatchExamples.length < 3) {
            f.mismatchExamples.push(
              `answered ${fin.status}, status ${s.http ?? s.error} ${b.status ?? ''} ${b.http ?? ''}`,
            );
          }
        }
      }),
    );
  }
  // recovery: from the fault to the end of the last second after it whose 2xx answers (with the
  // next second's) were under 80% of those of the seconds before the fault
  const buckets = new Array(Math.ceil(loadSeconds) + 60).fill(0);
  for (const o of orders) {
    if (o.final && o.final.status >= 200 && o.final.status < 300) buckets[Math.floor(o.final.end / 1000)]++;
  }
  const base = buckets.slice(1, Math.floor(faultAt)).reduce((a, b) => a + b, 0) / Math.max(1, Math.floor(faultAt) - 1);
  f.baseline = Math.round(base);
  // over two seconds, so that one slow second of a shared machine is not taken for the fault
  let last = -1;
  for (let s = Math.floor(faultAt); s < loadSeconds - 1; s++) if (buckets[s] + buckets[s + 1] < 1.6 * base) last = s;
  f.recovery = last < 0 ? 0 : Math.max(0, last + 1 - faultAt);
  f.throughput = buckets.slice(0, Math.ceil(loadSeconds)).join(' ');
  return f;
}

/** The rows of a scenario's table: [metric, value]. */
export function rows(f) {
  const codes = (m) =>
    Object.entries(m)
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ×${n}`)
      .join(', ') || '–';
  return [
    ['sent (orders, one Idempotency-Key each)', f.sent],
    ['final 2xx', f.ok],
    ['final errors, by code', codes(f.errors)],
    ['no final answer (retries gave up)', f.noAnswer],
    ['orders retried', f.retried],
    ['answers to all tries, by code', codes(f.tries)],
    ['lost (2xx without both effects)', f.lost],
    ['duplicated beyond at-least-once (an effect under two runs)', f.duplicated],
    ['same key run twice', f.ranTwice],
    ['half done (reserve without charge or release)', f.halfDone],
    ['status mismatches', f.mismatches + (f.mismatchExamples.length ? ` (${f.mismatchExamples.join('; ')})` : '')],
    ['runs left RUNNING', f.leftRunning],
    ['step keys executed more than once (at least once, documented)', f.reExecuted],
    ['killed at, ready again at (s)', f.times ? `${f.times.down}, ${f.times.up}` : '–'],
    ['recovery (s, 2xx/s back to 80%)', f.recovery],
    ['2xx per second (baseline, then each second)', `${f.baseline}: ${f.throughput}`],
  ];
}
