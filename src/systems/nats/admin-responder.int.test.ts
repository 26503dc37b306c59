import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { connect } from '@nats-io/transport-node';
import { NATS, natsUnavailableReason, skipOrFail } from '../../../test/nats-available.js';
import type { NatsSystem } from './system.js';
import { answerRunQueries } from './admin-responder.js';
import { Names } from './names.js';

/**
 * The runs responder on the real NATS answers `sagaway admin runs` in an inbox only: a
 * publisher on `P.admin.runs` must not make a runner publish where it chooses (a JetStream API
 * subject such as `$JS.API.STREAM.DELETE.<stream>`, with the runner's permissions).
 */

const natsDown = await natsUnavailableReason();

test(
  'admin runs: answered in an inbox, never on another reply subject',
  { skip: natsDown ? skipOrFail(natsDown) : false },
  async () => {
    const prefix = `adr${randomBytes(4).toString('hex')}`;
    const nc = await connect({ servers: NATS });
    const asker = await connect({ servers: NATS });
    const system = {
      subscribe: nc.subscribe.bind(nc),
      names: new Names(prefix),
      whenConnected: (hook: () => Promise<void>) => void hook(),
    } as unknown as NatsSystem;
    const endpoint = { name: 'api', deployment: 'd1', inFlightRuns: () => ({ count: 0, runs: [] }) };
    const responder = answerRunQueries(system, [endpoint as never], 'i1');
    try {
      await nc.flush();
      const answer = await asker.request(`${prefix}.admin.runs`, '', { timeout: 2000 });
      assert.equal(JSON.parse(answer.string()).instance, 'i1', 'an inbox gets the answer');
      const target = `${prefix}.victim`;
      const got: string[] = [];
      const sub = asker.subscribe(target, { callback: (_e, m) => void got.push(m.subject) });
      asker.publish(`${prefix}.admin.runs`, '', { reply: target });
      asker.publish(`${prefix}.admin.runs`, '', { reply: `$JS.API.STREAM.DELETE.${prefix}_x` });
      // the same connection's request after them: once it is answered, the others were handled
      await asker.request(`${prefix}.admin.runs`, '', { timeout: 2000 });
      await asker.flush();
      sub.unsubscribe();
      assert.deepEqual(got, [], 'no answer on a subject that is not an inbox');
    } finally {
      responder.stop();
      await nc.close();
      await asker.close();
    }
  },
);
