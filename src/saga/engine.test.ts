import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RawSaga, RawStep } from './schema.js';
import { startTestHost, type TestHost } from '../testing/index.js';
import { PROBE_HANDLER } from '../testing/probe-handler.js';

/** start -> e (event) -> ok (success, the whole payload) | bad (fail) */
function eventSaga(
  id: string,
  meta: Record<string, unknown>,
  extra: Partial<RawStep> = {},
  links?: RawStep['links'],
): RawSaga {
  return {
    id,
    path: `/${id}`,
    methods: ['GET', 'POST'],
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'e' }] },
      {
        id: 'e',
        type: 'event',
        eventMeta: { handler: 'probe', version: 0, ...meta } as never,
        links: links ?? [
          { to: 'ok', when: ['SUCCESS'] },
          { to: 'bad', when: ['*'] },
        ],
        ...extra,
      },
      { id: 'ok', type: 'success', outputElement: '$' },
      { id: 'bad', type: 'fail' },
    ],
  };
}

/** Drop steps no link reaches, so each test saga stays minimal and still passes the load checks. */
function prune(saga: RawSaga): RawSaga {
  const reached = new Set(['start']);
  for (let changed = true; changed;) {
    changed = false;
    for (const s of saga.steps) {
      if (!reached.has(s.id)) continue;
      for (const l of s.links ?? []) {
        if (reached.has(l.to)) continue;
        reached.add(l.to);
        changed = true;
      }
    }
  }
  return { ...saga, steps: saga.steps.filter((s) => reached.has(s.id)) };
}

function config(sagas: RawSaga[], runnerExtra: Record<string, unknown> = {}) {
  return { runners: { r: { handlers: ['./probe.mjs'], sagas: sagas.map(prune), ...runnerExtra } } };
}

describe('outputElement and inputElement (DESIGN §6.2)', () => {
  let h: TestHost;
  before(async () => {
    h = await startTestHost(
      config([
        eventSaga('rel', {
          action: 'Const',
          inputElement: 'parameters.order',
          outputElement: 'result',
          parameters: { value: 7 },
        }),
        eventSaga('relnoinput', { action: 'Const', outputElement: 'a.b', parameters: { value: 7 } }),
        eventSaga('rootrel', {
          action: 'Const',
          inputElement: 'parameters.order',
          outputElement: '$.x.y',
          parameters: { value: 7 },
        }),
        eventSaga('root', { action: 'Const', outputElement: '$', parameters: { value: { only: true } } }),
        eventSaga('rootbad', { action: 'Const', outputElement: '$', parameters: { value: 5 } }),
        eventSaga('discard', { action: 'Const', outputElement: '-', parameters: { value: { lost: 1 } } }),
        eventSaga('replace', { action: 'Const', inputElement: 'parameters.order', parameters: { value: 'replaced' } }),
        eventSaga('merge', { action: 'Const', parameters: { value: { merged: 1, parameters: { fresh: true } } } }),
        eventSaga('mergescalar', { action: 'Const', parameters: { value: 42 } }),
        eventSaga('missing', { action: 'Echo', inputElement: 'parameters.nothing' }),
        eventSaga('echo', { action: 'Echo', inputElement: 'parameters.order.items[1]', outputElement: '$.second' }),
      ]),
      { files: { 'probe.mjs': PROBE_HANDLER } },
    );
  });
  after(() => h.close());

  const input = { order: { id: 'o1', items: ['a', 'b'] } };
  test('relative to the input element, intermediate objects created', async () => {
    const r = await h.run('/rel', { input });
    assert.deepEqual((r.response as any).parameters.order, { id: 'o1', items: ['a', 'b'], result: 7 });
  });
  test('relative without input element: from the root', async () => {
    const r = await h.run('/relnoinput', { input });
    assert.deepEqual((r.response as any).a, { b: 7 });
  });
  test('$.x: from the root, the input element ignored', async () => {
    const r = await h.run('/rootrel', { input });
    assert.deepEqual((r.response as any).x, { y: 7 });
    assert.equal((r.response as any).parameters.order.x, undefined);
  });
  test('$: the output replaces the payload', async () => {
    const r = await h.run('/root', { input });
    assert.deepEqual(r.response, { only: true });
  });
  test('$ with a non-object output fails OUTPUT_NOT_OBJECT', async () => {
    const r = await h.run('/rootbad', { input });
    assert.equal(r.outcome, 'FAIL');
    assert.equal(r.error?.code, 'OUTPUT_NOT_OBJECT');
  });
  test('-: the output is discarded', async () => {
    const r = await h.run('/discard', { input });
    assert.deepEqual(r.response, { parameters: input });
  });
  test('absent with input element: the output replaces the input', async () => {
    const r = await h.run('/replace', { input });
    assert.equal((r.response as any).parameters.order, 'replaced');
  });
  test('absent without input element: an object is merged into the root (shallow)', async () => {
    const r = await h.run('/merge', { input });
    assert.deepEqual(r.response, { merged: 1, parameters: { fresh: true } });
  });
  test('absent without input element: a non-object is discarded', async () => {
    const r = await h.run('/mergescalar', { input });
    assert.deepEqual(r.response, { parameters: input });
  });
  test('INPUT_MISSING when the input element is absent', async () => {
    const r = await h.run('/missing', { input });
    assert.equal(r.outcome, 'FAIL');
    assert.equal(r.error?.code, 'INPUT_MISSING');
    assert.equal(r.error?.step, 'e');
  });
  test('indexes in paths', async () => {
    const r = await h.run('/echo', { input });
    assert.equal((r.response as any).second, 'b');
  });
});

describe('failure rules (DESIGN §4.3)', () => {
  let h: TestHost;
  const failMeta = { action: 'Fail', parameters: { code: 'OUT_OF_STOCK', message: 'none left', http: 409 } };
  before(async () => {
    h = await startTestHost(
      config([
        eventSaga('stepauto', failMeta, { autoFail: true }),
        { ...eventSaga('sagaauto', failMeta), autoFail: true },
        { ...eventSaga('stepoverride', failMeta, { autoFail: false }), autoFail: true },
        eventSaga('failink', failMeta, {}, [
          { to: 'ok', when: ['SUCCESS'] },
          { to: 'handled', when: ['FAIL'] },
        ]),
        eventSaga('star', failMeta, {}, [
          { to: 'ok', when: ['SUCCESS'] },
          { to: 'handled', when: ['*'] },
        ]),
        eventSaga('unhandled', failMeta, {}, [{ to: 'ok', when: ['SUCCESS'] }]),
        eventSaga('nowhen', failMeta, {}, [{ to: 'ok' }]),
        eventSaga('crash', { action: 'Crash' }, { autoFail: true }),
        eventSaga('steptimeout', { action: 'Slow', parameters: { ms: 5000 }, timeout: 50 }, {}, [
          { to: 'ok', when: ['SUCCESS'] },
          { to: 'handled', when: ['TIMEOUT'] },
        ]),
        { ...eventSaga('sagatimeout', { action: 'Slow', parameters: { ms: 5000 } }), timeout: '100ms' },
        eventSaga('failstep', failMeta, {}, [{ to: 'bad', when: ['FAIL'] }]),
      ])
        .runners.r.sagas.map((s) =>
          !s.steps.some((x) => (x.links ?? []).some((l) => l.to === 'handled'))
            ? s
            : {
                ...s,
                steps: [
                  ...s.steps,
                  {
                    id: 'handled',
                    type: 'transform',
                    expression: '{"handled": $error.code, "step": $error.step, "status": $status}',
                    links: [{ to: 'ok' }],
                  } as RawStep,
                ],
              },
        )
        .reduce((c, s) => (c.runners.r.sagas.push(prune(s)), c), config([])),
      { files: { 'probe.mjs': PROBE_HANDLER } },
    );
  });
  after(() => h.close());

  test("the step's autoFail ends the saga with the step's error, links notwithstanding", async () => {
    const r = await h.run('/stepauto');
    assert.equal(r.outcome, 'FAIL');
    assert.equal(r.http, 409);
    assert.equal(r.error?.code, 'OUT_OF_STOCK');
  });
  test("the saga's autoFail applies when the step sets none", async () => {
    const r = await h.run('/sagaauto');
    assert.equal(r.error?.code, 'OUT_OF_STOCK');
  });
  test("a step's autoFail: false wins over the saga's", async () => {
    const r = await h.run('/stepoverride');
    assert.equal(r.error?.code, 'OUT_OF_STOCK');
    assert.equal(r.error?.step, 'e', 'followed the "*" link to the fail step, which keeps the last error');
  });
  test('a FAIL link is followed and $error / $status are visible', async () => {
    const r = await h.run('/failink');
    assert.equal(r.outcome, 'SUCCESS');
    assert.deepEqual(r.response, { handled: 'OUT_OF_STOCK', step: 'e', status: 'FAIL' });
  });
  test('"*" catches a failure', async () => {
    const r = await h.run('/star');
    assert.equal((r.response as any).handled, 'OUT_OF_STOCK');
  });
  test('no link for the failure: UNHANDLED_STEP_FAILURE wrapping the step error', async () => {
    const r = await h.run('/unhandled');
    assert.equal(r.outcome, 'FAIL');
    assert.equal(r.error?.code, 'UNHANDLED_STEP_FAILURE');
    assert.equal(r.error?.cause?.code, 'OUT_OF_STOCK');
    assert.equal(r.http, 409);
  });
  test('a link without when is not taken after a failure', async () => {
    const r = await h.run('/nowhen');
    assert.equal(r.error?.code, 'UNHANDLED_STEP_FAILURE');
  });
  test('a plain thrown error is ACTION_FAILED without its message', async () => {
    const r = await h.run('/crash');
    assert.equal(r.error?.code, 'ACTION_FAILED');
    assert.doesNotMatch(JSON.stringify(r), /srv|secret\.js|internal detail/);
  });
  test('an event timeout is status TIMEOUT and follows TIMEOUT links', async () => {
    const r = await h.run('/steptimeout');
    assert.deepEqual(r.response, { handled: 'EVENT_TIMEOUT', step: 'e', status: 'TIMEOUT' });
  });
  test('the saga timeout ends with TIMEOUT 504 and aborts the action', async () => {
    const before = (globalThis as any).__probeAborted ?? 0;
    const t0 = Date.now();
    const r = await h.run('/sagatimeout');
    assert.equal(r.outcome, 'TIMEOUT');
    assert.equal(r.http, 504);
    assert.equal(r.error?.code, 'SAGA_TIMEOUT');
    // at the saga's 100 ms timeout, not at the end of the action's 5 s
    assert.ok(Date.now() - t0 < 5000 / 2, `ended after ${Date.now() - t0} ms`);
    assert.equal((globalThis as any).__probeAborted, before + 1);
  });
  test('a fail step without its own error ends with the last step error', async () => {
    const r = await h.run('/failstep');
    assert.equal(r.error?.code, 'OUT_OF_STOCK');
  });
});

describe('links, conditions, transforms, ACK (DESIGN §4.2, §6.5)', () => {
  let h: TestHost;
  /** start -> c (condition) -> a | b, each writing its name as the response */
  const cond = (id: string, expression: string, links: RawStep['links']): RawSaga => ({
    id,
    path: `/${id}`,
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'c' }] },
      { id: 'c', type: 'condition', expression, links },
      { id: 'a', type: 'transform', expression: '"a"', outputElement: 'r', links: [{ to: 'end' }] },
      { id: 'b', type: 'transform', expression: '"b"', outputElement: 'r', links: [{ to: 'end' }] },
      { id: 'end', type: 'success', outputElement: 'r' },
    ],
  });
  before(async () => {
    const sagas: RawSaga[] = [
      cond('bool', 'parameters.n > 1', [
        { to: 'a', when: [true] },
        { to: 'b', when: ['false'] },
      ]),
      cond('dash', 'parameters.missing', [
        { to: 'a', when: ['-'] },
        { to: 'b', when: ['*'] },
      ]),
      cond('prio', 'parameters.n', [
        { to: 'a', when: ['*'] },
        { to: 'b', when: ['*'], priority: 5 },
      ]),
      cond('order', '"x"', [
        { to: 'a', when: ['x'] },
        { to: 'b', when: ['x'] },
      ]),
      cond('ctx', '$request.method & ":" & $request.path & ":" & $user.sub', [
        { to: 'a', when: ['GET:/ctx:alice'] },
        { to: 'b', when: ['*'] },
      ]),
      cond('nomatch', '"zzz"', [
        { to: 'a', when: ['x'] },
        { to: 'b', when: ['y'] },
      ]),
      {
        id: 'loop',
        path: '/loop',
        steps: [
          { id: 'start', type: 'start', links: [{ to: 'c' }] },
          {
            id: 'c',
            type: 'condition',
            expression: 'true',
            links: [
              { to: 'c', when: [true] },
              { to: 'done', when: ['*'] },
            ],
          },
          { id: 'done', type: 'success' },
        ],
      },
      {
        id: 'transform',
        path: '/transform',
        steps: [
          { id: 'start', type: 'start', links: [{ to: 't1' }] },
          {
            id: 't1',
            type: 'transform',
            expression: '{"total": $sum(parameters.items.price)}',
            outputElement: 'summary',
            links: [{ to: 't2' }],
          },
          {
            id: 't2',
            type: 'transform',
            expression: '$merge([$, {"who": $user.sub}])',
            links: [{ to: 'bad', when: ['FAIL'] }, { to: 'ok' }],
          },
          { id: 'ok', type: 'success' },
          { id: 'bad', type: 'fail' },
        ],
      },
      {
        id: 'transformfail',
        path: '/transformfail',
        steps: [
          { id: 'start', type: 'start', links: [{ to: 't' }] },
          { id: 't', type: 'transform', expression: '$number("abc") + $error()', links: [{ to: 'ok' }] },
          { id: 'ok', type: 'success' },
        ],
      },
      eventSaga('ack', { action: 'Ack', outputElement: '$.task' }),
      eventSaga('followack', { action: 'Ack', outputElement: '$.task', followAck: true }, {}, [
        { to: 'isack', when: ['ACK'] },
        { to: 'bad', when: ['*'] },
      ]),
      {
        id: 'items',
        path: '/items/:id/parts/:part',
        methods: ['GET'],
        steps: [
          { id: 'start', type: 'start', links: [{ to: 'ok' }] },
          { id: 'ok', type: 'success', outputElement: 'parameters' },
        ],
      },
      {
        id: 'items-new',
        path: '/items/new/parts/:part',
        methods: ['GET'],
        steps: [
          { id: 'start', type: 'start', links: [{ to: 'ok' }] },
          { id: 'ok', type: 'success', http: 202 },
        ],
      },
      {
        id: 'admin',
        path: '/admin',
        roles: ['admin'],
        steps: [
          { id: 'start', type: 'start', links: [{ to: 'ok' }] },
          { id: 'ok', type: 'success' },
        ],
      },
    ];
    const withIsAck = sagas.map((s) =>
      s.id === 'followack'
        ? {
            ...s,
            steps: [
              ...s.steps,
              {
                id: 'isack',
                type: 'condition',
                expression: '$status',
                links: [
                  { to: 'ok', when: ['ACK'] },
                  { to: 'bad', when: ['*'] },
                ],
              } as RawStep,
            ],
          }
        : s,
    );
    h = await startTestHost(config(withIsAck), { files: { 'probe.mjs': PROBE_HANDLER } });
  });
  after(() => h.close());

  test('booleans compare as true/false whatever YAML type the link uses', async () => {
    assert.equal((await h.run('/bool', { query: {}, input: { n: 2 } })).response, 'a');
    assert.equal((await h.run('/bool', { input: { n: 0 } })).response, 'b');
  });
  test('null/undefined is "-"', async () => {
    assert.equal((await h.run('/dash')).response, 'a');
  });
  test('highest priority wins; then the order written', async () => {
    assert.equal((await h.run('/prio', { input: { n: 1 } })).response, 'b');
    assert.equal((await h.run('/order')).response, 'a');
  });
  test('$request and $user are bound in expressions', async () => {
    const user = { sub: 'alice', roles: [], claims: {}, anonymous: false };
    assert.equal((await h.run('/ctx', { user })).response, 'a');
    assert.equal((await h.run('/ctx', { user: { ...user, sub: 'eve' } })).response, 'b');
    assert.equal((await h.run('/ctx', { method: 'POST', user })).error?.code, 'METHOD_NOT_ALLOWED');
  });
  test('a condition value no link matches ends with NO_MATCHING_LINK', async () => {
    const r = await h.run('/nomatch');
    assert.equal(r.error?.code, 'NO_MATCHING_LINK');
  });
  test('a loop is stopped by the step limit', async () => {
    const r = await h.run('/loop');
    assert.equal(r.error?.code, 'STEP_LIMIT_EXCEEDED');
  });
  test('transform writes at outputElement, or replaces the payload', async () => {
    const user = { sub: 'bob', roles: [], claims: {}, anonymous: false };
    const r = await h.run('/transform', { input: { items: [{ price: 2 }, { price: 3 }] }, user });
    assert.deepEqual(r.response, { summary: { total: 5 }, who: 'bob' });
  });
  test('a throwing transform is TRANSFORM_FAILED', async () => {
    const r = await h.run('/transformfail');
    assert.equal(r.error?.code, 'UNHANDLED_STEP_FAILURE');
    assert.equal(r.error?.cause?.code, 'TRANSFORM_FAILED');
  });
  test('ACK without followAck: the saga returns at once, 202, with the output', async () => {
    const r = await h.run('/ack');
    assert.equal(r.outcome, 'ACK');
    assert.equal(r.http, 202);
    assert.match((r.response as any).task.ticket, /:e$/);
  });
  test('ACK with followAck: the saga goes on, and $status is ACK', async () => {
    const r = await h.run('/followack');
    assert.equal(r.outcome, 'SUCCESS');
    assert.ok((r.response as any).task.ticket);
  });
  test('path parameters join the input; literal segments beat parameters', async () => {
    const r = await h.run('/items/42/parts/50%', { input: { q: '1' } });
    assert.deepEqual(
      r.response,
      { q: '1', id: '42', part: '50%' },
      'the path arrives decoded and is not decoded again',
    );
    assert.equal((await h.run('/items/new/parts/p')).http, 202);
    assert.equal((await h.run('/nothing/here')).error?.code, 'NOT_FOUND');
  });
  test('saga roles: anonymous is UNAUTHORIZED, a missing role FORBIDDEN', async () => {
    assert.equal((await h.run('/admin')).error?.code, 'UNAUTHORIZED');
    assert.equal(
      (await h.run('/admin', { user: { sub: 'u', roles: ['user'], claims: {}, anonymous: false } })).http,
      403,
    );
    assert.equal(
      (await h.run('/admin', { user: { sub: 'u', roles: ['admin'], claims: {}, anonymous: false } })).outcome,
      'SUCCESS',
    );
  });
});

describe('idempotency keys', () => {
  test('`<runId>:<stepId>` on the first visit, distinct on later visits of the same step', async () => {
    const h = await startTestHost(
      config([
        {
          id: 'loop',
          path: '/loop',
          steps: [
            { id: 'start', type: 'start', links: [{ to: 'e' }] },
            {
              id: 'e',
              type: 'event',
              eventMeta: { handler: 'probe', action: 'Ack', version: 0, followAck: true, outputElement: '$.last' },
              links: [{ to: 'count' }],
            },
            {
              id: 'count',
              type: 'transform',
              expression: '{"keys": $append(keys ? keys : [], last.ticket)}',
              outputElement: '$.acc',
              links: [{ to: 'more' }],
            },
            {
              id: 'more',
              type: 'condition',
              expression: '$count(acc.keys) < 3',
              links: [
                { to: 'again', when: [true] },
                { to: 'ok', when: [false] },
              ],
            },
            { id: 'again', type: 'transform', expression: '$merge([$, {"keys": acc.keys}])', links: [{ to: 'e' }] },
            { id: 'ok', type: 'success', outputElement: 'acc.keys' },
          ],
        },
      ]),
      { files: { 'probe.mjs': PROBE_HANDLER } },
    );
    try {
      const r = await h.run('/loop');
      const keys = r.response as string[];
      assert.equal(keys.length, 3, JSON.stringify(r));
      assert.equal(new Set(keys).size, 3);
      assert.equal(keys[0], `${r.runId}:e`);
      assert.equal(keys[1], `${r.runId}:e#2`);
    } finally {
      await h.close();
    }
  });
});

describe('logging', () => {
  test('a step failure that the flow handles is still logged with its code and step', async () => {
    const lines: string[] = [];
    const { pino } = await import('pino');
    const { Writable } = await import('node:stream');
    const log = pino({ level: 'info' }, new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }));
    const h = await startTestHost(
      config([
        eventSaga(
          'handled',
          { action: 'Fail', parameters: { code: 'UPSTREAM_SAID_NO', message: 'upstream answered 401' } },
          {},
          [
            { to: 'ok', when: ['SUCCESS'] },
            { to: 'bad', when: ['FAIL'] },
          ],
        ),
      ]),
      { files: { 'probe.mjs': PROBE_HANDLER }, log },
    );
    try {
      await h.run('/handled');
      const entry = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'step failed');
      assert.ok(entry, lines.join(''));
      assert.equal(entry.code, 'UPSTREAM_SAID_NO');
      assert.equal(entry.step, 'e');
      assert.equal(entry.detail, 'upstream answered 401');
    } finally {
      await h.close();
    }
  });
});
