import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NATS, natsUnavailableReason, skipOrFail } from '../../../test/nats-available.js';
import { silentLogger } from '../../core/logger.js';
import { coalesceWrites } from './coalesce.js';

const natsDown = await natsUnavailableReason();

test(
  'coalesced writes: everything published in one turn arrives, in order; flush and requests still work',
  {
    skip: natsDown ? skipOrFail(natsDown) : false,
  },
  async () => {
    const { connect, createInbox } = await import('@nats-io/transport-node');
    const pub = await connect({ servers: NATS });
    const sub = await connect({ servers: NATS });
    try {
      assert.equal(coalesceWrites(pub, silentLogger()), true, 'the pinned nats.js is the version it was written for');
      const subject = createInbox();
      const got: string[] = [];
      const all = new Promise<void>((done) => {
        sub.subscribe(subject, {
          callback: (_e, m) => {
            got.push(Buffer.from(m.data).toString());
            if (got.length === 300) done();
          },
        });
      });
      await sub.flush();
      for (let i = 0; i < 300; i++) pub.publish(subject, Buffer.from(String(i)));
      await pub.flush();
      await all;
      assert.deepEqual(
        got,
        Array.from({ length: 300 }, (_, i) => String(i)),
      );
      sub.subscribe(`${subject}.echo`, { callback: (_e, m) => void m.respond(m.data) });
      await sub.flush();
      const r = await pub.request(`${subject}.echo`, Buffer.from('hi'), { timeout: 2000 });
      assert.equal(Buffer.from(r.data).toString(), 'hi');
    } finally {
      await pub.close();
      await sub.close();
    }
  },
);
