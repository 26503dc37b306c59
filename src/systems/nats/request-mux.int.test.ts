import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NATS, natsUnavailableReason, skipOrFail } from '../../../test/nats-available.js';
import { classifyRequestError } from './errors.js';
import { jetstreamPublish, JetStreamPublishError, MuxRequestError, RequestMux } from './request-mux.js';

/** Gateway -> runner requests over one reply subscription, on the real NATS server. */

const natsDown = await natsUnavailableReason();

test(
  'run mux: answers matched to their requests; no responders and timeouts named; one subscription',
  {
    skip: natsDown ? skipOrFail(natsDown) : false,
  },
  async () => {
    const { connect, createInbox } = await import('@nats-io/transport-node');
    const nc = await connect({ servers: NATS });
    try {
      const subject = `${createInbox()}.run`;
      // the runner side answers with its input reversed, after a delay that reverses the order
      const sub = nc.subscribe(subject, {
        callback: (_err, msg) => {
          const text = Buffer.from(msg.data).toString();
          setTimeout(() => msg.respond(Buffer.from(`re:${text}`)), 50 - Number(text));
        },
      });
      const before = nc.stats();
      const mux = new RequestMux(nc, createInbox());
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => mux.request(subject, Buffer.from(String(i)), 2000)),
      );
      assert.deepEqual(
        answers.map((m) => Buffer.from(m.data).toString()),
        Array.from({ length: 40 }, (_, i) => `re:${i}`),
      );
      assert.equal(mux.size, 0, 'nothing left waiting');
      // one subscription for the mux, one for the responder (nats.js counts them on the connection)
      assert.equal(
        (nc as unknown as { protocol: { subscriptions: { size(): number } } }).protocol.subscriptions.size(),
        2,
      );
      assert.ok(nc.stats().outMsgs - before.outMsgs >= 40);

      const none = await mux.request(`${subject}.nobody`, Buffer.from('x'), 2000).catch((e: unknown) => e);
      assert.ok(none instanceof MuxRequestError && none.kind === 'no-responders');
      assert.equal(classifyRequestError(none, undefined), 'no-responders');

      const silent = nc.subscribe(`${subject}.silent`, { callback: () => undefined });
      const t0 = Date.now();
      const late = await mux.request(`${subject}.silent`, Buffer.from('x'), 150).catch((e: unknown) => e);
      assert.ok(late instanceof MuxRequestError && late.kind === 'timeout');
      assert.ok(Date.now() - t0 >= 140, 'waited for its timeout');
      assert.equal(classifyRequestError(late, undefined), 'timeout');
      assert.equal(mux.size, 0);
      silent.unsubscribe();
      sub.unsubscribe();
      mux.close();
    } finally {
      await nc.close();
    }
  },
);

test(
  'jetstreamPublish: stored messages answer their sequence; a subject no stream captures is refused',
  {
    skip: natsDown ? skipOrFail(natsDown) : false,
  },
  async () => {
    const { connect, createInbox } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: NATS });
    const jsm = await jetstreamManager(nc);
    const name = `muxtest_${process.pid}_${Date.now().toString(36)}`;
    try {
      await jsm.streams.add({ name, subjects: [`${name}.>`] });
      const mux = new RequestMux(nc, createInbox());
      const seqs = await Promise.all(
        Array.from({ length: 10 }, (_, i) => jetstreamPublish(mux, `${name}.a`, Buffer.from(String(i)), 2000)),
      );
      assert.deepEqual(
        [...seqs].sort((a, b) => a - b),
        Array.from({ length: 10 }, (_, i) => i + 1),
      );
      assert.equal((await jsm.streams.info(name)).state.messages, 10, 'stored');
      const refused = await jetstreamPublish(mux, `${name}x.a`, Buffer.from('x'), 2000).catch((e: unknown) => e);
      assert.ok(refused instanceof MuxRequestError && refused.kind === 'no-responders');
      // a stream that refuses the message (too large for it) answers a typed error with its code
      await jsm.streams.add({ name: `${name}_small`, subjects: [`${name}_small.>`], max_msg_size: 16 });
      const big = await jetstreamPublish(mux, `${name}_small.a`, Buffer.alloc(64), 2000).catch((e: unknown) => e);
      assert.ok(big instanceof JetStreamPublishError, String(big));
      assert.equal(big.code, 'refused');
      assert.equal(typeof big.errCode, 'number');
      mux.close();
    } finally {
      await jsm.streams.delete(name).catch(() => undefined);
      await jsm.streams.delete(`${name}_small`).catch(() => undefined);
      await nc.close();
    }
  },
);
