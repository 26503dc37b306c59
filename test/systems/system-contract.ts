import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import type { RawConfig } from '../../src/config/schema.js';
import { loadConfig } from '../../src/config/load.js';
import { Cancel } from '../../src/core/cancel.js';
import { silentLogger } from '../../src/core/logger.js';
import type { EventMessage, EventMetaSpec } from '../../src/core/messages.js';
import { BUILTIN_HANDLERS } from '../../src/handlers/index.js';
import { Host } from '../../src/runner/host.js';
import { createState } from '../../src/states/index.js';
import { createCluster } from '../../src/systems/index.js';
import { DEFAULT_STATUS_MAX_BYTES, DEFAULT_STATUS_TTL_MS } from '../../src/config/compile-runner.js';
import type { Cluster, System } from '../../src/systems/system.js';
import { TraceBus, type RunRecord } from '../../src/core/trace.js';
import { PROBE_HANDLER } from '../../src/testing/probe-handler.js';

/**
 * The one contract every transport (src/systems/system.ts) keeps, run against each: `local`
 * (local.test.ts) and `nats` over a real server (nats.int.test.ts). A new transport passes the
 * same tests or it is not done. Runner `svc` serves GET /echo and consumes stream `work` with the
 * probe handler (src/testing/probe-handler.ts). The first tests hold the System (run, dispatch);
 * the last the rest of the cluster port: process directory, outcomes, trace relay, admin.
 */

/** How a suite reaches one transport: the system of that name in a host built from `config`. */
export interface SystemTarget {
  /** the systems block (and defaultSystem) of the configuration; the stream `work` uses `system` */
  systems: Pick<RawConfig, 'systems' | 'defaultSystem'>;
  /** the name of the system under test */
  system: string;
  /** skip reason when the service is absent, else false */
  skip: string | false;
  /** after the suite: remove what the transport left on a shared service */
  cleanup?: () => Promise<void>;
}

const config = (target: SystemTarget): RawConfig => ({
  ...target.systems,
  runners: {
    svc: {
      handlers: ['./probe.mjs'],
      streams: { work: { handler: 'probe', system: target.system } },
      sagas: [
        {
          id: 'echo',
          path: '/echo',
          steps: [
            { id: 'start', type: 'start', links: [{ to: 'done' }] },
            { id: 'done', type: 'success', outputElement: 'parameters' },
          ],
        },
      ],
    },
  },
});

function event(meta: Partial<EventMetaSpec>, deadlineMs = 10_000): EventMessage {
  const id = randomUUID();
  return {
    id,
    runId: id,
    stepId: 's',
    idempotencyKey: `${id}:s`,
    stream: 'work',
    meta: { action: 'Const', version: 0, stream: 'work', ...meta },
    payload: { parameters: {} },
    context: { request: { method: 'GET', path: '/', id, query: {} }, user: null },
    deadline: Date.now() + deadlineMs,
  };
}

/** Register the contract tests for one transport. */
export function runSystemContract(name: string, target: SystemTarget): void {
  describe(`system contract: ${name}`, { skip: target.skip }, () => {
    let host: Host;
    let system: System;
    let cluster: Cluster;
    let dir: string;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'sagaway-system-'));
      await writeFile(join(dir, 'probe.mjs'), PROBE_HANDLER);
      await writeFile(join(dir, 'sagaway.yaml'), stringify(config(target)));
      const { settings } = await loadConfig(join(dir, 'sagaway.yaml'));
      host = await Host.start({
        settings,
        log: silentLogger(),
        builtins: BUILTIN_HANDLERS,
        createState,
        createCluster,
        serveRequests: true,
      });
      assert.ok(await host.systemsConnected(10_000), 'the systems connected');
      const found = target.system === 'local' ? host.local : host.cluster;
      assert.ok(found, `the cluster of system ${target.system}`);
      cluster = found;
      const sys = cluster.system(target.system);
      assert.ok(sys, `system ${target.system}`);
      system = sys;
      // a transport that discovers runners needs a moment to hear of them
      const end = Date.now() + 10_000;
      while ((await system.dispatch(event({ parameters: { value: 1 } }), new Cancel())).status !== 'SUCCESS') {
        if (Date.now() > end) throw new Error('no runner of stream work became reachable');
        await new Promise((r) => setTimeout(r, 50));
      }
    });
    after(async () => {
      await host?.close();
      await rm(dir, { recursive: true, force: true });
      await target.cleanup?.();
    });

    test('ready() says the transport is usable', async () => {
      assert.equal(await system.ready(), true);
    });

    test('run() reaches the runner and returns its result', async () => {
      const r = await system.run('svc', {
        method: 'GET',
        path: '/echo',
        input: { hello: 'world' },
        query: {},
        requestId: randomUUID(),
        user: null,
      });
      assert.equal(r.outcome, 'SUCCESS', JSON.stringify(r.error));
      assert.equal(r.http, 200);
      assert.deepEqual(r.response, { hello: 'world' });
    });

    test('run() on a runner nobody hosts is a FAIL result with RUNNER_UNAVAILABLE, not a rejection', async () => {
      const r = await system.run('nobody', {
        method: 'GET',
        path: '/echo',
        input: {},
        query: {},
        requestId: randomUUID(),
        user: null,
        deadline: Date.now() + 3000,
      });
      assert.equal(r.outcome, 'FAIL');
      assert.equal(r.error?.code, 'RUNNER_UNAVAILABLE');
      assert.equal(r.http, 503);
    });

    test('dispatch() delivers an event and resolves with the reply, output and elements', async () => {
      const reply = await system.dispatch(
        event({ parameters: { value: { n: 42 } }, outputElement: '$.out' }),
        new Cancel(),
      );
      assert.equal(reply.status, 'SUCCESS', JSON.stringify(reply.error));
      assert.deepEqual(reply.output, { n: 42 });
      assert.equal(reply.outputElement, '$.out');
      assert.equal(reply.inputElement, null);
    });

    test("an action's failure comes back as a FAIL reply with its code, never as a rejection", async () => {
      const reply = await system.dispatch(
        event({ action: 'Fail', parameters: { code: 'OUT_OF_STOCK', message: 'none left', http: 409 } }),
        new Cancel(),
      );
      assert.equal(reply.status, 'FAIL');
      assert.equal(reply.error?.code, 'OUT_OF_STOCK');
      assert.equal(reply.error?.http, 409);
    });

    test('a cancelled dispatch resolves promptly (TIMEOUT or FAIL), long before the action would end', async () => {
      const cancel = new Cancel();
      const t0 = Date.now();
      const pending = system.dispatch(event({ action: 'Slow', parameters: { ms: 5000 } }), cancel);
      setTimeout(() => cancel.abort(), 200);
      const reply = await pending;
      assert.ok(Date.now() - t0 < 2500, `answered after ${Date.now() - t0} ms`);
      assert.notEqual(reply.status, 'SUCCESS');
    });

    test('an event on a stream nobody consumes fails with RUNNER_UNAVAILABLE', async () => {
      const e = { ...event({ stream: 'nowhere' }), stream: 'nowhere' };
      const reply = await system.dispatch(e, new Cancel());
      assert.equal(reply.status, 'FAIL');
      assert.equal(reply.error?.code, 'RUNNER_UNAVAILABLE');
    });

    test('the cluster runs a saga request through the system that carries them', async () => {
      const r = await cluster.run('svc', {
        method: 'GET',
        path: '/echo',
        input: { via: 'cluster' },
        query: {},
        requestId: randomUUID(),
        user: null,
      });
      assert.equal(r.outcome, 'SUCCESS', JSON.stringify(r.error));
      assert.deepEqual(r.response, { via: 'cluster' });
    });

    test('the process directory knows this process as live, and a made-up one as not', () => {
      assert.equal(cluster.directory.instance, host.instance);
      assert.equal(cluster.directory.isLive(host.instance), true);
      assert.equal(cluster.directory.isLive(`gone-${randomUUID()}`), false);
      assert.ok(cluster.directory.advertiseIntervalMs >= 0);
    });

    test('readiness and self-checks: connected, and no library patch switched off', () => {
      assert.equal(cluster.connected, true);
      for (const [name, up] of Object.entries(cluster.ready())) assert.equal(up, true, name);
      for (const [guard, off] of Object.entries(cluster.guardsOff())) assert.equal(off, 0, guard);
    });

    test('outcomes: written RUNNING then DONE, read by run id and by correlation id (first run wins), per scope', async () => {
      const writer = cluster.outcomeWriter(
        // the settings the host's own writer of runner svc uses (a bucket's TTL is the runner's, not a writer's)
        {
          name: 'svc',
          deployment: 'default',
          statusTtlMs: DEFAULT_STATUS_TTL_MS,
          statusMaxBytes: DEFAULT_STATUS_MAX_BYTES,
        },
        silentLogger(),
      );
      const reader = cluster.outcomeReader();
      assert.ok(writer && reader, 'the cluster keeps outcomes of a runner without a journal');
      await until(() => writer.ready, 'the outcome store is open');
      const scope = `scope-${randomUUID()}`;
      const [first, second, correlation] = [randomUUID(), randomUUID(), `corr-${randomUUID()}`];
      const handle = writer.begin(scope, first, correlation);
      await until(async () => (await reader.lookup(scope, first))?.status === 'RUNNING', 'RUNNING is readable');
      writer.end(handle, { outcome: 'SUCCESS', http: 200, response: { n: 1 } });
      await until(async () => (await reader.lookup(scope, first))?.status === 'DONE', 'DONE is readable');
      const done = await reader.lookup(scope, first);
      assert.equal(done?.outcome, 'SUCCESS');
      assert.equal(done?.http, 200);
      assert.deepEqual(done?.response, { n: 1 });
      assert.equal(done?.correlationId, correlation);
      // a second run with the same correlation id: the index keeps pointing at the first
      writer.end(writer.begin(scope, second, correlation), { outcome: 'FAIL', http: 409 });
      await until(async () => (await reader.lookup(scope, second))?.status === 'DONE', 'the second run is readable');
      assert.equal((await reader.lookup(scope, correlation, { byCorrelation: true }))?.requestId, first);
      assert.equal(await reader.lookup(scope, correlation), undefined, 'not by correlation unless asked');
      assert.equal(await reader.lookup(`other-${scope}`, first), undefined, "another caller's scope sees nothing");
    });

    test('trace relay: runs reach a listening source while it listens, masked; none after it stops', async () => {
      const relay = cluster.traces();
      assert.ok(relay, 'the cluster relays traces');
      const bus = new TraceBus();
      const publisher = relay.publish(bus, (v) => (v && typeof v === 'object' ? { ...v, card: '***' } : v));
      const got: RunRecord[] = [];
      const requestId = `trace-${randomUUID()}`;
      const stop = relay.source().listen((run) => {
        if (run.requestId === requestId) got.push(run);
      });
      try {
        // the runner side starts listening once it hears a watching console: trace until one arrives
        await until(() => {
          const t = bus.begin({ requestId, runner: 'svc', sagaId: 'echo', method: 'GET', path: '/echo' });
          t?.step({ step: 's', kind: 'event', status: 'SUCCESS', ms: 1 }, { card: '4111', n: 2 });
          t?.end({ outcome: 'SUCCESS', http: 200 });
          return got.length > 0;
        }, 'a relayed run');
        assert.equal(got[0]!.sagaId, 'echo');
        assert.deepEqual(JSON.parse(got[0]!.steps[0]!.payload!), { card: '***', n: 2 });
      } finally {
        stop();
        publisher.stop();
      }
      assert.equal(bus.active, false, 'the bus is not listened to once the relay stopped');
    });

    test('admin: the runs in flight of every live runner process, this one included', async () => {
      const answers = await cluster.admin().runs(2000);
      const mine = answers.find((a) => a.instance === host.instance);
      assert.ok(mine, JSON.stringify(answers));
      assert.deepEqual(
        mine.runners.map((r) => [r.runner, r.count]),
        [['svc', 0]],
      );
    });
  });
}

/** Wait until `check` holds (polled), at most 10 s. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
