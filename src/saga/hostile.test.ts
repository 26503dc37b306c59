import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RawSaga } from './schema.js';
import { startTestHost } from '../testing/index.js';
import { PROBE_HANDLER } from '../testing/probe-handler.js';

const files = { 'probe.mjs': PROBE_HANDLER };

function withMeta(meta: Record<string, unknown>): RawSaga {
  return {
    id: 'h',
    path: '/h',
    methods: ['POST'],
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'e' }] },
      {
        id: 'e',
        type: 'event',
        eventMeta: { handler: 'probe', action: 'Echo', version: 0, ...meta } as never,
        links: [{ to: 'ok' }],
      },
      { id: 'ok', type: 'success' },
    ],
  };
}

describe('hostile paths are refused when the saga loads', () => {
  const bad = [
    'parameters.__proto__',
    '$.constructor.prototype',
    'a.prototype.b',
    'x[0].__proto__',
    'a'.repeat(257),
    Array(33).fill('k').join('.'),
    'a[*]',
    '$..a',
  ];
  for (const path of bad) {
    for (const field of ['inputElement', 'outputElement']) {
      test(`${field} = ${path.slice(0, 40)}`, async () => {
        await assert.rejects(
          startTestHost(
            { runners: { r: { handlers: ['./probe.mjs'], sagas: [withMeta({ [field]: path })] } } },
            { files },
          ),
          (e: any) => {
            assert.equal(e.code, 'CONFIG_INVALID');
            assert.match(e.message, new RegExp(`eventMeta\\.${field}`));
            return true;
          },
        );
      });
    }
  }
  test('a path_ parameter too', async () => {
    await assert.rejects(
      startTestHost(
        {
          runners: {
            r: {
              handlers: ['./probe.mjs'],
              sagas: [withMeta({ inject: true, parameters: { path_x: '$.__proto__.x' } })],
            },
          },
        },
        { files },
      ),
      /parameters\.path_x/,
    );
  });
  test('an injected path that resolves to a prototype key fails the step, not the process', async () => {
    const h = await startTestHost(
      {
        runners: {
          r: { handlers: ['./probe.mjs'], sagas: [withMeta({ inject: true, outputElement: '$.%%parameters.k%%' })] },
        },
      },
      { files },
    );
    try {
      const r = await h.run('/h', { method: 'POST', input: { k: '__proto__' } });
      assert.equal(r.outcome, 'FAIL');
      assert.equal(r.error?.cause?.code, 'INVALID_PATH');
      assert.equal(({} as any).polluted, undefined);
    } finally {
      await h.close();
    }
  });
});

describe('request bodies cannot pollute prototypes', () => {
  const bodies = [
    '{"__proto__":{"polluted":1}}',
    '{"constructor":{"prototype":{"polluted":1}}}',
    '{"a":{"__proto__":{"polluted":1}}}',
  ];
  const sagas: RawSaga[] = [
    { ...withMeta({ inputElement: 'parameters', outputElement: '$.copy' }), id: 'copy', path: '/copy' },
    { ...withMeta({ inputElement: 'parameters' }), id: 'replace', path: '/replace' },
    { ...withMeta({}), id: 'merge', path: '/merge' },
    { ...withMeta({ outputElement: '$', inputElement: 'parameters' }), id: 'root', path: '/root' },
    {
      id: 'transform',
      path: '/transform',
      methods: ['POST'],
      steps: [
        { id: 'start', type: 'start', links: [{ to: 't' }] },
        { id: 't', type: 'transform', expression: '$merge([$, parameters])', links: [{ to: 'ok' }] },
        { id: 'ok', type: 'success' },
      ],
    },
  ];
  for (const body of bodies) {
    test(body, async () => {
      const h = await startTestHost({ runners: { r: { handlers: ['./probe.mjs'], sagas } } }, { files });
      try {
        for (const s of sagas) {
          const r = await h.run(s.path, { method: 'POST', input: JSON.parse(body) });
          assert.notEqual(r.outcome, undefined);
          assert.equal(({} as any).polluted, undefined, `${s.id}: Object.prototype untouched`);
          assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
          const response = r.response as Record<string, unknown> | undefined;
          if (response && typeof response === 'object')
            assert.equal(Object.getPrototypeOf(response), Object.prototype, `${s.id}: response prototype`);
        }
      } finally {
        await h.close();
      }
    });
  }
});
