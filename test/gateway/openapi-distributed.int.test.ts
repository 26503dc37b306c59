import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { call, Cluster, dropStreams, uniquePrefix } from '../distributed/harness.js';
import { NATS, natsUnavailableReason, skipOrFail } from '../nats-available.js';

/** `sagaway gateway` (distributed mode) serves /api/openapi.json from its own API map, no runner needed. */

const reason = await natsUnavailableReason();

test(
  'sagaway gateway serves a valid OpenAPI document of its APIs',
  { skip: reason && skipOrFail(reason) },
  async () => {
    const prefix = uniquePrefix('openapi');
    const cluster = await Cluster.create({
      'sagaway.yaml': `
gateway:
  apis: [{ path: /orders, runner: shop, public: true }]
systems:
  bus: { type: nats, servers: ["${NATS}"], prefix: ${prefix} }
defaultSystem: bus
runners:
  shop:
    sagas:
      - id: order
        path: /orders/:id
        methods: [GET, POST]
        steps:
          - { id: start, type: start, links: [{ to: done }] }
          - { id: done, type: success }
`,
    });
    try {
      const { port } = await cluster.gateway();
      const res = await call(port, '/api/openapi.json');
      assert.equal(res.status, 200);
      const doc = res.body as { paths: Record<string, Record<string, unknown>> };
      assert.deepEqual(Object.keys(doc.paths).sort(), ['/api/request/orders/{id}', '/api/stream/orders/{id}']);
      assert.deepEqual(Object.keys(doc.paths['/api/request/orders/{id}']!).sort(), ['get', 'post']);
      assert.equal((await new Validator().validate(doc)).valid, true);
    } finally {
      await cluster.close();
      await dropStreams(NATS, prefix);
    }
  },
);
