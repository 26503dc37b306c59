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
import type { System } from '../../src/systems/system.js';
import { PROBE_HANDLER } from '../../src/testing/probe-handler.js';

/**
 * The one contract every transport (src/systems/system.ts) keeps, run against each: `local`
 * (local.test.ts) and `nats` over a real server (nats.int.test.ts). A new transport passes the
 * same tests or it is not done. Runner `svc` serves GET /echo and consumes stream `work` with the
 * probe handler (src/testing/probe-handler.ts).
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
        serveRequests: true,
      });
      assert.ok(await host.systemsConnected(10_000), 'the systems connected');
      const found = target.system === 'local' ? host.local : host.hub?.systems.get(target.system);
      assert.ok(found, `system ${target.system}`);
      system = found;
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
  });
}
