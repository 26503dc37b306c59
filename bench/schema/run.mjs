// Workload "schema" (issue 28): what a saga's inputSchema costs the gateway per request, for
// the todo example's create-todo (a title, 1 to 500 characters).
// (a) The check itself, in process: InputChecks.check (the saga's route matched, its compiled
//     Ajv function run) on parsed bodies, next to the same compiled function called alone.
// (b) One-shot POSTs through fastify.inject (no sockets) with the rate limit off and a stub
//     saga service, with the schema and without it, interleaved rounds: the check's share of
//     a whole request in the gateway.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from '../lib/servers.mjs';

const dist = (p) => import(join(ROOT, 'dist', 'src', p));

/** Rows of the suite table for this workload. */
export async function schema(opts) {
  const { loadConfig } = await dist('config/load.js');
  const { InputChecks } = await dist('gateway/request/validate-input.js');
  const { sagaSchemas } = await dist('config/io-schemas.js');
  const { createGateway } = await dist('gateway/server.js');
  const { silentLogger } = await dist('core/logger.js');
  const { settings } = await loadConfig(join(ROOT, 'examples', 'todo', 'sagaway.yaml'), {
    env: { ...process.env, TODO_DB: ':memory:' },
  });
  const runner = settings.runners['todo'];
  const create = runner.plans.find((p) => p.id === 'create-todo');
  if (create.raw.inputSchema === undefined) throw new Error('the todo example has no inputSchema');

  // (a) the check, in process
  const checks = new InputChecks(settings.runners);
  const request = {
    method: 'POST',
    id: 'bench',
    sagaway: { api: { settings: { runner: 'todo' } }, sagaPath: { path: '/todos' }, principal: null },
  };
  const bodies = Array.from({ length: 1024 }, (_, i) => JSON.parse(`{"title":"buy milk ${i}"}`));
  const validate = sagaSchemas(create.raw).body;
  const n = Math.max(200_000, Math.round(opts.seconds * 200_000));
  const time = (fn) => {
    for (let i = 0; i < 50_000; i++) fn(bodies[i & 1023]); // warm up
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn(bodies[i & 1023]);
    return ((performance.now() - t0) * 1000) / n;
  };
  const gateway = [];
  const alone = [];
  for (let r = 0; r < opts.rounds; r++) {
    gateway.push(
      time((b) => {
        if (checks.check(request, b) !== undefined) throw new Error('refused a valid body');
      }),
    );
    alone.push(
      time((b) => {
        if (!validate(b)) throw new Error('refused a valid body');
      }),
    );
  }
  const check = median(gateway);
  const bare = median(alone);
  opts.log(`   check ${check.toFixed(3)} µs, Ajv alone ${bare.toFixed(3)} µs`);

  // (b) whole requests through fastify.inject, with and without the schema
  const limits = { ...settings.gateway.limits, rate: undefined };
  const base = { ...settings, gateway: { ...settings.gateway, limits } };
  const without = {
    ...base,
    runners: {
      todo: { ...runner, plans: runner.plans.map((p) => ({ ...p, raw: { ...p.raw, inputSchema: undefined } })) },
    },
  };
  const service = { run: async () => ({ outcome: 'SUCCESS', http: 201, response: { id: '1' } }) };
  const typed = await createGateway({ settings: base, service, log: silentLogger() });
  const plain = await createGateway({ settings: without, service, log: silentLogger() });
  const requests = Math.max(2000, Math.round(opts.seconds * 2000));
  const perRequest = async (gw) => {
    const t0 = performance.now();
    for (let i = 0; i < requests; i++) {
      const res = await gw.app.inject({
        method: 'POST',
        url: '/api/request/todos',
        headers: { 'content-type': 'application/json' },
        payload: `{"title":"buy milk ${i}"}`,
      });
      if (res.statusCode !== 201) throw new Error(`answered ${res.statusCode}: ${res.body}`);
    }
    return ((performance.now() - t0) * 1000) / requests;
  };
  const withSchema = [];
  const withoutSchema = [];
  try {
    await perRequest(typed);
    await perRequest(plain);
    for (let r = 0; r < opts.rounds; r++) {
      withSchema.push(await perRequest(typed));
      withoutSchema.push(await perRequest(plain));
    }
  } finally {
    await typed.close();
    await plain.close();
  }
  const a = median(withSchema);
  const b = median(withoutSchema);
  opts.log(`   inject: ${a.toFixed(1)} µs with the schema, ${b.toFixed(1)} µs without`);
  return [
    {
      workload: "input schema check: the todo example's create-todo body",
      metric: 'µs/request',
      sagaway: check,
      peer: 'the same Ajv function alone',
      peerValue: bare,
      ratio: bare / check,
      absTarget: { text: '≤ 2 µs', met: check <= 2 },
      detail: `InputChecks.check: the saga's route matched, then its schema compiled at load; median of ${opts.rounds} rounds of ${n.toLocaleString('en-US')} parsed bodies`,
    },
    {
      workload: 'input schema: one-shot POST /todos in process (fastify.inject, rate limit off)',
      metric: 'µs/request',
      sagaway: a,
      peer: 'the same without inputSchema',
      peerValue: b,
      ratio: b / a,
      detail: `a stub saga service; difference ${(a - b).toFixed(1)} µs per request (noise included); median of ${opts.rounds} interleaved rounds of ${requests.toLocaleString('en-US')} requests`,
    },
  ];
}

function median(values) {
  const s = [...values].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)];
}
