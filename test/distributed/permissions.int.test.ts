import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { NatsConnection } from '@nats-io/transport-node';
import { skipOrFail, waitUntil } from './harness.js';
import { NATS_SERVER, ownNatsAvailable, startOwnNats, type OwnNats, type Role } from './own-nats.js';

/**
 * The permissions of examples/distributed/nats-server.conf refuse what a role does not need
 * (docs/distributed.md, "Credentials and permissions"): a client without credentials cannot
 * connect; a runner's credentials cannot switch console tracing on, read an outcome bucket or
 * ask for the runs in flight; a gateway's cannot send events, touch the streams or write outcomes.
 * Each refusal is checked twice: the server answers a permissions violation, and a privileged
 * witness never receives what was refused (while it receives the same message from a role that
 * may send it).
 */

const BUCKET = 'shop_status_shop';

describe(
  'NATS permissions of the distributed example',
  { skip: ownNatsAvailable() ? false : skipOrFail(`${NATS_SERVER} is not installed`) },
  () => {
    let nats: OwnNats;
    const open: NatsConnection[] = [];

    async function as(role: Role): Promise<{ nc: NatsConnection; refused: Set<string> }> {
      const { connect } = await import('@nats-io/transport-node');
      const nc = await connect({ servers: nats.url, ...nats.credentials(role), timeout: 5000 });
      open.push(nc);
      const refused = new Set<string>();
      void (async () => {
        for await (const s of nc.status()) {
          if (s.type === 'error' && s.error.name === 'PermissionViolationError') {
            const e = s.error as Error & { operation: string; subject: string };
            refused.add(`${e.operation} ${e.subject}`);
          }
        }
      })();
      return { nc, refused };
    }

    /**
     * Wait until the server's violation for `what` (`publish S`, `subscription S`, or a prefix of
     * one with `prefix`) reached the client: status events come a tick after the flush.
     */
    async function refusal(client: { refused: Set<string> }, what: string, prefix = false): Promise<void> {
      const has = () => (prefix ? [...client.refused].some((r) => r.startsWith(what)) : client.refused.has(what));
      await waitUntil(has, 3000, 10).catch(() => {
        throw new Error(`not refused: ${what}; refused: ${[...client.refused].join(', ')}`);
      });
    }

    /** Messages `nc` receives on `subject` from now on. */
    function witness(nc: NatsConnection, subject: string): string[] {
      const got: string[] = [];
      nc.subscribe(subject, {
        callback: (err, m) => {
          if (!err) got.push(m.string());
        },
      });
      return got;
    }

    before(async () => {
      nats = await startOwnNats();
      // An outcome bucket with one value, written as a runner of the example does (it may write).
      const runner = await as('runner');
      const { jetstream } = await import('@nats-io/jetstream');
      const { Kvm } = await import('@nats-io/kv');
      const kv = await new Kvm(jetstream(runner.nc)).create(BUCKET, { history: 1 });
      await kv.put('run-1', JSON.stringify({ requestId: 'run-1', card: '4111111111111111' }));
    });

    after(async () => {
      await Promise.all(open.map((nc) => nc.close().catch(() => undefined)));
      await nats?.stop();
    });

    test('a client without credentials, or with a wrong password, cannot connect', async () => {
      const { connect } = await import('@nats-io/transport-node');
      await assert.rejects(connect({ servers: nats.url, timeout: 3000 }), /authorization/i);
      await assert.rejects(
        connect({ servers: nats.url, user: 'runner', pass: 'not-the-password', timeout: 3000 }),
        /authorization/i,
      );
    });

    test('runner credentials cannot switch console tracing on (shop.console.watch); the gateway can', async () => {
      const admin = await as('admin');
      const seen = witness(admin.nc, 'shop.console.watch');
      await admin.nc.flush();
      const runner = await as('runner');
      runner.nc.publish('shop.console.watch', 'from-runner');
      await runner.nc.flush();
      await refusal(runner, 'publish shop.console.watch');
      const gateway = await as('gateway');
      gateway.nc.publish('shop.console.watch', 'from-gateway');
      await gateway.nc.flush();
      await admin.nc.flush();
      // The runner's publish was handled before the gateway's (it was flushed first).
      assert.deepEqual(seen, ['from-gateway']);
      // Nor can a runner read the traces a watched runner publishes.
      witness(runner.nc, 'shop.console.trace');
      await runner.nc.flush();
      await refusal(runner, 'subscription shop.console.trace');
    });

    test('runner credentials cannot read an outcome bucket; the gateway can', async () => {
      const { jetstream } = await import('@nats-io/jetstream');
      const { Kvm } = await import('@nats-io/kv');
      const gateway = await as('gateway');
      const readable = await new Kvm(jetstream(gateway.nc, { timeout: 2000 })).open(BUCKET, { allow_direct: true });
      const entry = await readable.get('run-1');
      assert.match(entry?.string() ?? '', /"run-1"/, 'the gateway reads outcomes');

      const runner = await as('runner');
      const kv = await new Kvm(jetstream(runner.nc, { timeout: 1000 })).open(BUCKET, { allow_direct: true });
      await assert.rejects(kv.get('run-1'));
      await refusal(runner, `publish $JS.API.DIRECT.GET.KV_${BUCKET}`, true);
      // Nor listen to the bucket's writes, nor get its messages by the stream API.
      witness(runner.nc, `$KV.${BUCKET}.>`);
      runner.nc.publish(`$JS.API.STREAM.MSG.GET.KV_${BUCKET}`, JSON.stringify({ last_by_subj: `$KV.${BUCKET}.run-1` }));
      await runner.nc.flush();
      await refusal(runner, `subscription $KV.${BUCKET}.>`);
      await refusal(runner, `publish $JS.API.STREAM.MSG.GET.KV_${BUCKET}`);
    });

    test('runner and gateway credentials cannot ask for the runs in flight (shop.admin.runs); admin can', async () => {
      const runnerSide = await as('runner');
      const seen = witness(runnerSide.nc, 'shop.admin.runs');
      await runnerSide.nc.flush();
      for (const role of ['runner', 'gateway'] as const) {
        const client = await as(role);
        client.nc.publish('shop.admin.runs', role, { reply: '_INBOX.x' });
        await client.nc.flush();
        await refusal(client, 'publish shop.admin.runs');
      }
      const admin = await as('admin');
      admin.nc.publish('shop.admin.runs', 'admin', { reply: '_INBOX.x' });
      await admin.nc.flush();
      await runnerSide.nc.flush();
      assert.deepEqual(seen, ['admin']);
    });

    test('gateway credentials cannot send events, delete a stream or write an outcome', async () => {
      const gateway = await as('gateway');
      for (const subject of ['shop.ev.work.worker.a', '$JS.API.STREAM.DELETE.shop_events', `$KV.${BUCKET}.run-1`]) {
        gateway.nc.publish(subject, '{}');
      }
      await gateway.nc.flush();
      await refusal(gateway, 'publish shop.ev.work.worker.a');
      await refusal(gateway, `publish $KV.${BUCKET}.run-1`);
      assert.deepEqual([...gateway.refused].sort(), [
        'publish $JS.API.STREAM.DELETE.shop_events',
        `publish $KV.${BUCKET}.run-1`,
        'publish shop.ev.work.worker.a',
      ]);
      // The bucket still holds the runner's value.
      const admin = await as('admin');
      const { jetstream } = await import('@nats-io/jetstream');
      const { Kvm } = await import('@nats-io/kv');
      const kv = await new Kvm(jetstream(admin.nc)).open(BUCKET);
      assert.equal((await kv.get('run-1'))?.revision, 1);
    });
  },
);
