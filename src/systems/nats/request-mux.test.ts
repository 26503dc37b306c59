import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JetStreamPublishError, pubAckSequence } from './request-mux.js';

/** A JetStream acknowledgement read into a sequence, or a typed error: never known by its text. */

const ack = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

test('a PubAck answers its sequence', () => {
  assert.equal(pubAckSequence(ack({ stream: 's', seq: 42 })), 42);
});

test("the server's refusal is a JetStreamPublishError with its JetStream code", () => {
  const err = (() => {
    try {
      pubAckSequence(ack({ error: { code: 400, err_code: 10071, description: 'wrong last sequence: 3' } }));
    } catch (e) {
      return e;
    }
  })();
  assert.ok(err instanceof JetStreamPublishError);
  assert.equal(err.code, 'refused');
  assert.equal(err.errCode, 10071);
  assert.match(err.message, /wrong last sequence/);
});

test('an acknowledgement without a sequence, or not JSON, has its own code', () => {
  assert.throws(() => pubAckSequence(ack({ stream: 's' })), { name: 'JetStreamPublishError', code: 'no-sequence' });
  assert.throws(() => pubAckSequence(ack('+OK')), { name: 'JetStreamPublishError', code: 'unreadable' });
  assert.throws(
    () => pubAckSequence(ack({ error: { description: 7 } })),
    (e: unknown) => {
      return e instanceof JetStreamPublishError && e.code === 'refused' && e.errCode === undefined;
    },
  );
});
