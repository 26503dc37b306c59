import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NoRespondersError, RequestError, TimeoutError } from '@nats-io/transport-node';
import { classifyRequestError, ConnectionLostError } from './errors.js';

const types = { NoRespondersError, RequestError, TimeoutError };

test('request failures are told apart by type, also when wrapped in a RequestError', () => {
  assert.equal(classifyRequestError(new TimeoutError(), types), 'timeout');
  assert.equal(classifyRequestError(new NoRespondersError('sagaway.run.x'), types), 'no-responders');
  assert.equal(
    classifyRequestError(new RequestError('failed', { cause: new NoRespondersError('s') }), types),
    'no-responders',
  );
  assert.equal(classifyRequestError(new RequestError('failed', { cause: new TimeoutError() }), types), 'timeout');
  assert.equal(classifyRequestError(new ConnectionLostError(), types), 'connection-lost');
});

test('message text decides nothing: an error that only says "timeout" is not a timeout', () => {
  assert.equal(classifyRequestError(new Error('timeout'), types), 'other');
  assert.equal(classifyRequestError(new Error('connection lost'), types), 'other');
  assert.equal(classifyRequestError(new RequestError('timeout'), types), 'other');
  assert.equal(classifyRequestError(new TimeoutError(), undefined), 'other', 'not connected yet: no types to compare');
});
