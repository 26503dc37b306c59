import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AckPolicy } from '@nats-io/jetstream';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import type { Settings } from '../../src/config/settings.js';
import { Cancel } from '../../src/core/cancel.js';
import { silentLogger } from '../../src/core/logger.js';
import { BUILTIN_HANDLERS } from '../../src/handlers/index.js';
import { Host } from '../../src/runner/host.js';
import { createState } from '../../src/states/index.js';
import { createCluster } from '../../src/systems/index.js';
import { PROBE_HANDLER } from '../../src/testing/probe-handler.js';
import { NATS, natsUnavailableReason, skipOrFail } from '../nats-available.js';
import { CLI } from './spawn.js';
import type { NatsHub } from '../../src/systems/nats/hub.js';

/**
 * `sagaway admin` against the real NATS: consumers of retired deployments are listed and removed
 * (never a live one, never one with events waiting unless --force), and runs in flight are
 * listed by the runner processes themselves.
 */

const natsDown = await natsUnavailableReason();
const prefix = `adm${randomBytes(4).toString('hex')}`;

const config = {
  systems: { bus: { type: 'nats', servers: [NATS], prefix } },
  defaultSystem: 'bus',
  runners: {
    api: {
      handlers: ['./probe.mjs'],
      sagas: [
        {
          id: 'slow',
          path: '/slow',
          // Longer than two `sagaway admin` starts on a loaded 2-core machine (several seconds
          // each): the run must still be in flight when they ask. The test cancels it.
          timeout: '60s',
          steps: [
            { id: 'start', type: 'start', links: [{ to: 'e' }] },
            {
              id: 'e',
              type: 'event',
              eventMeta: { handler: 'probe', action: 'Slow', version: 0, parameters: { ms: 55000 } },
              links: [{ to: 'ok' }],
            },
            { id: 'ok', type: 'success' },
          ],
        },
      ],
    },
    work: { handlers: ['./probe.mjs'], streams: { jobs: { handler: 'probe' } } },
  },
};

/** Run the CLI without blocking this process (its hosts must answer the command). */
function admin(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, 'admin', ...args], {
      env: { ...process.env, SAGAWAY_ADMIN_LISTEN_MS: '500' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('exit', (code) => done({ code, stdout, stderr }));
  });
}

/** The settings with runner `work` as deployment `deployment`. */
function as(settings: Settings, deployment: string): Settings {
  return { ...settings, runners: { ...settings.runners, work: { ...settings.runners['work']!, deployment } } };
}

describe('sagaway admin', { skip: natsDown ? skipOrFail(natsDown) : false }, () => {
  let dir: string;
  let file: string;
  let settings: Settings;
  let live: Host;
  const start = (s: Settings, runners: string[]) =>
    Host.start({
      settings: s,
      log: silentLogger(),
      builtins: BUILTIN_HANDLERS,
      createState,
      createCluster,
      runners,
      serveRequests: true,
    });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sagaway-admin-'));
    file = join(dir, 'sagaway.yaml');
    await writeFile(join(dir, 'probe.mjs'), PROBE_HANDLER);
    await writeFile(file, stringify(config));
    ({ settings } = await loadConfig(file));
    // Deployments "old" and "stale" ran once (their durable consumers stay), then stopped.
    for (const d of ['old', 'stale']) {
      const h = await start(as(settings, d), ['work']);
      assert.ok(await h.systemsConnected(10_000));
      const sys = (h.cluster as NatsHub).gatewaySystem()!;
      for (let i = 0; i < 100; i++) {
        if (
          await sys
            .jetstream()
            .manager.consumers.info(sys.names.eventsStream, sys.names.consumer('jobs', 'work', d))
            .then(
              () => true,
              () => false,
            )
        )
          break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await h.close();
    }
    live = await start(as(settings, 'new'), ['work', 'api']);
    assert.ok(await live.systemsConnected(10_000));
    const sys = (live.cluster as NatsHub).gatewaySystem()!;
    // an event waits for "stale", which nobody reads any more
    await sys.jetstream().client.publish(sys.names.event('jobs', 'work', 'stale'), new TextEncoder().encode('{}'));
    // a consumer sagaway did not make (someone's tool on the same stream): listed, never removed
    await sys.jetstream().manager.consumers.add(sys.names.eventsStream, {
      durable_name: `${prefix}_theirs`,
      description: 'sagaway stream jobs, runner work, deployment gone',
      ack_policy: AckPolicy.Explicit,
      filter_subject: `${prefix}.ev.other`,
    });
  });

  after(async () => {
    await live?.close();
    await rm(dir, { recursive: true, force: true });
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: NATS });
    const jsm = await jetstreamManager(nc);
    for (const s of [`${prefix}_events`, `${prefix}_resp`]) await jsm.streams.delete(s).catch(() => undefined);
    await nc.close();
  });

  test('consumers: live and retired, with events pending', async () => {
    const [r, json] = await Promise.all([
      admin(['consumers', '--config', file]),
      admin(['consumers', '--config', file, '--json', '--deployment', 'stale']),
    ]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.match(lines[0]!, /^STATE\s+RUNNER\s+DEPLOYMENT\s+STREAM\s+PENDING\s+ACK-PENDING\s+LAST-ACTIVE\s+CONSUMER$/);
    const row = (d: string) => lines.find((l) => new RegExp(`^\\S+\\s+work\\s+${d}\\s`).test(l))?.split(/\s+/);
    assert.deepEqual(row('new')?.slice(0, 5), ['live', 'work', 'new', 'jobs', '0']);
    assert.deepEqual(row('old')?.slice(0, 5), ['retired', 'work', 'old', 'jobs', '0']);
    assert.deepEqual(row('stale')?.slice(0, 5), ['retired', 'work', 'stale', 'jobs', '1']);
    assert.match(r.stdout, new RegExp(`^foreign\\s+-\\s+-\\s+-\\s+0\\s+0\\s+-\\s+${prefix}_theirs$`, 'm'));
    assert.equal(lines.at(-1), '4 consumer(s): 1 live, 2 retired, 1 foreign');

    assert.equal(json.code, 0);
    const rows = JSON.parse(json.stdout) as { state: string; pending: number; deployment: string }[];
    assert.deepEqual(
      rows.map((x) => [x.deployment, x.state, x.pending]),
      [['stale', 'retired', 1]],
    );
  });

  test('remove-consumers: dry run, then the retired one without events; --force for the other', async () => {
    const dry = await admin(['remove-consumers', '--config', file, '--dry-run']);
    assert.equal(dry.code, 1, 'the consumer with an event waiting is kept: exit 1');
    assert.match(dry.stdout, /work\s+old\s+jobs\s+\S+\s+would remove/);
    assert.match(dry.stdout, /work\s+stale\s+jobs\s+\S+\s+kept: 1 event\(s\) waiting/);

    const r = await admin(['remove-consumers', '--config', file]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /work\s+old\s+jobs\s+\S+\s+removed$/m);
    assert.match(r.stdout, /1 of 2 done/);

    const forced = await admin(['remove-consumers', '--config', file, '--force', '--json']);
    assert.equal(forced.code, 0);
    assert.deepEqual(
      (JSON.parse(forced.stdout) as { deployment: string; result: string }[]).map((x) => [x.deployment, x.result]),
      [['stale', 'removed, with 1 event(s)']],
    );
    const none = await admin(['remove-consumers', '--config', file, '--force']);
    assert.equal(none.code, 0);
    assert.equal(none.stdout.trim(), 'no consumer of a retired deployment');
    const sys = (live.cluster as NatsHub).gatewaySystem()!;
    const left = await sys.jetstream().manager.consumers.info(sys.names.eventsStream, `${prefix}_theirs`);
    assert.equal(left.name, `${prefix}_theirs`, 'the foreign consumer is still there');
  });

  test('runs: the runs in flight, from the runner processes', async () => {
    const cancel = new Cancel();
    const run = live.run('api', {
      method: 'GET',
      path: '/slow',
      input: {},
      query: {},
      requestId: `${prefix}-r1`,
      user: null,
      cancel,
    });
    try {
      const [r, other] = await Promise.all([
        admin(['runs', '--config', file, '--runner', 'api']),
        admin(['runs', '--config', file, '--json', '--runner', 'work']),
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^api\\s+1\\s+\\S+\\s+slow\\s+${prefix}-r1\\s+\\S+Z\\s+\\d+\\.\\ds$`, 'm'));
      assert.equal(r.stdout.trim().split('\n').at(-1), '1 run(s) in flight in 1 runner process(es)');
      const json = JSON.parse(other.stdout) as unknown[];
      assert.deepEqual(
        json.map((x) => (x as { count: number }).count),
        [0],
      );
    } finally {
      cancel.abort();
      await run;
    }
  });

  test('usage errors exit 2; an unreachable NATS exits 3', async () => {
    const away = join(dir, 'away.yaml');
    const unreachable = { bus: { type: 'nats', servers: ['nats://127.0.0.1:1'], prefix, connectTimeout: '200ms' } };
    await writeFile(away, stringify({ ...config, systems: unreachable }));
    const [bad, r] = await Promise.all([
      admin(['frobnicate', '--config', file]),
      admin(['consumers', '--config', away]),
    ]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /admin needs one of consumers, remove-consumers, runs/);
    assert.equal(r.code, 3);
    assert.match(r.stderr, /NATS of system "bus" not reachable/);
  });
});
