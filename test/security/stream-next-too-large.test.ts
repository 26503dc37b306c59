import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway } from '../../src/gateway/server.js';
import { startTestHost } from '../../src/testing/index.js';

/**
 * A stream saga's `next` is carried, base64url, by every event id of the following batch. A saga
 * that answers a huge `next` would multiply it into every event and produce ids that a resume
 * refuses (tokens are at most 16 KB): over 4 KB of JSON the stream ends with `event: error`
 * STREAM_NEXT_TOO_LARGE after the events already due, instead of sending oversized ids.
 */

const CONFIG = (size: number) => `
gateway:
  apis: [{ path: /, runner: r, public: true }]
  stream: { minWait: 1ms, defaultWait: 1ms }
runners:
  r:
    sagas:
      - id: feed
        path: /feed
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: page }] }
          - id: page
            type: transform
            expression: '$exists(parameters.previous) ? { "list": [{ "n": 2 }] } : { "list": [{ "n": 1 }], "next": $pad("", ${size}, "x"), "continue": true, "wait": 0 }'
            links: [{ to: done }]
          - { id: done, type: success }
`;

async function feed(size: number): Promise<string> {
  const h = await startTestHost(CONFIG(size));
  const gw = await createGateway({ settings: h.settings, service: h.host, log: silentLogger() });
  try {
    const { port } = await gw.listen(0, '127.0.0.1');
    const res = await fetch(`http://127.0.0.1:${port}/api/stream/feed`);
    return await res.text();
  } finally {
    await gw.close();
    await h.close();
  }
}

test('a next over 4 KB ends the stream with STREAM_NEXT_TOO_LARGE; ids stay small; one under it streams on', async () => {
  const big = await feed(20_000);
  assert.match(big, /data: \{"n":1\}/, 'the entry already due is delivered');
  assert.doesNotMatch(big, /"n":2/, 'no poll with the oversized next');
  assert.match(big, /event: error\n/);
  assert.match(big, /"code":"STREAM_NEXT_TOO_LARGE"/);
  assert.doesNotMatch(big, /x{100}/, 'the next is echoed nowhere');
  const longestId = Math.max(...[...big.matchAll(/^id: (.*)$/gm)].map((m) => m[1]!.length));
  assert.ok(longestId < 1000, `event ids stay small (${longestId})`);

  const small = await feed(1000);
  assert.match(small, /"n":1/);
  assert.match(small, /"n":2/, 'a next under the bound is used');
  assert.match(small, /event: end\n/);
});
