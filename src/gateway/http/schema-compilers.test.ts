import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { lazySchemaCompilers } from './schema-compilers.js';

test('a route with a schema still validates and serializes with the lazily loaded compilers', async () => {
  const app = Fastify({ schemaController: { compilersFactory: lazySchemaCompilers } });
  app.post(
    '/x',
    {
      schema: {
        body: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
        response: { 200: { type: 'object', properties: { n: { type: 'integer' } } } },
      },
    },
    async (req) => ({ n: (req.body as { n: number }).n, dropped: true }),
  );
  try {
    const bad = await app.inject({ method: 'POST', url: '/x', payload: { n: 'x' } });
    assert.equal(bad.statusCode, 400);
    const ok = await app.inject({ method: 'POST', url: '/x', payload: { n: 2 } });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), { n: 2 }, 'serialized by the response schema');
  } finally {
    await app.close();
  }
});
