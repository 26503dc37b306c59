import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Payload, RequestContext } from '../../core/types.js';
import type { EffectiveSettings } from '../../config/effective-settings.js';
import { injectSettings, type InjectSources } from './inject.js';

/**
 * injectSettings called directly (DESIGN §6.4): each placeholder kind, its JSON type, defaults,
 * the path rules, the errors, the bounds, and the invariant that text a placeholder produced is
 * never scanned again. test/security/second-order-inject.test.ts checks the invariant end to end
 * on every path; this file pins the rules one by one (written against the mutants of inject.ts
 * that the end-to-end tests let through, TESTING.md).
 */

const SECRET = 's3cr3t-value';

function sources(over: Partial<InjectSources> = {}): InjectSources {
  const payload: Payload = {
    parameters: { id: 7 },
    order: { qty: 3, note: '#{{DB_PASSWORD}}', tags: ['a', 'b'], ok: true, nothing: null },
    root: 'R',
  };
  const context: RequestContext = {
    request: { method: 'POST', path: '/o', id: 'req-9', query: {} },
    user: { sub: 'ann', roles: ['user'], claims: {}, anonymous: false },
  };
  return {
    payload,
    context,
    values: { REGION: 'eu-1', EMPTY: '' },
    secrets: { get: (n) => (n === 'DB_PASSWORD' ? SECRET : n === 'BLANK' ? '' : undefined) },
    ...over,
  };
}

function settings(over: Partial<EffectiveSettings> = {}): EffectiveSettings {
  return { action: 'A', version: 0, parameters: {}, inject: true, ...over };
}

/** The injected parameters of `parameters` (inject on, input element `$.order`). */
function params(parameters: Record<string, unknown>, over: Partial<EffectiveSettings> = {}, src = sources()) {
  return injectSettings(settings({ inputElement: '$.order', parameters, ...over }), src).settings.parameters;
}

const code = (c: string) => (e: unknown) => (e as { code?: string }).code === c;

test('a setting that is exactly one placeholder takes the value with its JSON type', () => {
  assert.deepEqual(params({ q: '%%qty%%', t: '%%tags%%', ok: '%%ok%%', r: '${{REGION}}' }), {
    q: 3,
    t: ['a', 'b'],
    ok: true,
    r: 'eu-1',
  });
  // an object or array value keeps its shape; nested settings are resolved too
  assert.deepEqual(params({ deep: { list: ['%%qty%%', 'x %%qty%%'] } }), { deep: { list: [3, 'x 3'] } });
});

test('inside text values are written as text, objects as JSON; text without a placeholder is kept', () => {
  assert.deepEqual(params({ s: 'n=%%qty%%;t=%%tags%%;r=${{REGION}}', plain: 'a % b { c }', none: 'x%%y' }), {
    s: 'n=3;t=["a","b"];r=eu-1',
    plain: 'a % b { c }',
    none: 'x%%y',
  });
  assert.deepEqual(params({ n: 5, b: false, z: null }), { n: 5, b: false, z: null }, 'non-strings as they are');
});

test('variable paths: relative to the input element, $. from the payload root, @. from the request context', () => {
  assert.deepEqual(params({ a: '%%$.root%%', b: '%%@.request.id%%', c: '%%@.user.sub%%', d: '%% qty %%' }), {
    a: 'R',
    b: 'req-9',
    c: 'ann',
    d: 3,
  });
  // path_NAME configures where NAME reads, as configured (never itself resolved)
  assert.deepEqual(params({ path_who: '@.user.sub', who: '%%who%%' }).who, 'ann');
  assert.deepEqual(params({ path_x: '$.root', x: 'at %%x%%' }).x, 'at R');
  // without an input element, relative names read from the payload root
  assert.deepEqual(params({ r: '%%root%%' }, { inputElement: undefined }), { r: 'R' });
  assert.deepEqual(params({ r: '%%root%%' }, { inputElement: '$' }), { r: 'R' });
});

test('defaults: used when the variable does not resolve; a value that resolves wins', () => {
  assert.deepEqual(params({ a: '%%missing|fallback%%', b: '%%qty|9%%', c: '%%missing|%%', d: 'x%%missing|y%%z' }), {
    a: 'fallback',
    b: 3,
    c: '',
    d: 'xyz',
  });
  // null is a value: it does not fall back
  assert.deepEqual(params({ n: '%%nothing|d%%' }), { n: null });
});

test('unresolved: a variable without default is a 400, an unknown value or secret an error, all INJECT_UNRESOLVED', () => {
  assert.throws(
    () => params({ a: '%%missing%%' }),
    (e: unknown) =>
      code('INJECT_UNRESOLVED')(e) &&
      (e as { http?: number }).http === 400 &&
      (e as Error).message === 'variable "missing" did not resolve and has no default',
  );
  assert.throws(() => params({ a: '${{NOPE}}' }), code('INJECT_UNRESOLVED'));
  assert.throws(() => params({ a: '#{{NOPE}}' }), code('INJECT_UNRESOLVED'));
  assert.throws(() => params({ a: '${{toString}}' }), code('INJECT_UNRESOLVED'), 'own values only');
  assert.equal(params({ e: '${{EMPTY}}' }).e, '');
});

test('secrets: resolved as text, reported for scrubbing (an empty one is not)', () => {
  const r = injectSettings(
    settings({ parameters: { pw: '#{{DB_PASSWORD}}', dsn: 'u:#{{DB_PASSWORD}}@h', b: '#{{BLANK}}' } }),
    sources(),
  );
  assert.deepEqual(r.settings.parameters, { pw: SECRET, dsn: `u:${SECRET}@h`, b: '' });
  assert.deepEqual(r.secretsUsed, [SECRET, SECRET]);
});

test('caller data is never scanned again: a payload value that looks like a placeholder stays literal', () => {
  const r = injectSettings(
    settings({ inputElement: '$.order', parameters: { n: '%%note%%', m: 'note: %%note%%' } }),
    sources(),
  );
  assert.deepEqual(r.settings.parameters, { n: '#{{DB_PASSWORD}}', m: 'note: #{{DB_PASSWORD}}' });
  assert.deepEqual(r.secretsUsed, []);
});

test('domain, input and output elements are resolved as text; other types are refused', () => {
  const src = sources({
    payload: { parameters: {}, sel: { el: 'order', dom: 'shop', out: '$.result', n: 2, obj: {} }, order: { qty: 3 } },
  });
  const r = injectSettings(
    settings({
      inputElement: '$.%%sel.el%%',
      domain: '%%$.sel.dom%%-%%$.sel.n%%',
      outputElement: '%%$.sel.out%%',
      parameters: { q: '%%qty%%' },
    }),
    src,
  );
  assert.equal(r.settings.inputElement, '$.order');
  assert.equal(r.settings.domain, 'shop-2');
  assert.equal(r.settings.outputElement, '$.result');
  assert.deepEqual(r.settings.parameters, { q: 3 }, 'read relative to the resolved input element');
  assert.equal(injectSettings(settings({ domain: '%%sel.n%%' }), src).settings.domain, '2');
  assert.throws(() => injectSettings(settings({ domain: '%%sel.obj%%' }), src), code('INJECT_UNRESOLVED'));
  assert.throws(() => injectSettings(settings({ outputElement: '%%sel%%' }), src), code('INJECT_UNRESOLVED'));
  const absent = injectSettings(settings({ parameters: {} }), src).settings;
  assert.equal('domain' in absent || 'outputElement' in absent || 'inputElement' in absent, false);
});

test('bounds: nesting deeper than 32 and results over 64 KiB are refused; forbidden keys are dropped', () => {
  let deep: unknown = 'x';
  for (let i = 0; i < 33; i++) deep = [deep];
  assert.throws(() => params({ deep }), code('INJECT_UNRESOLVED'));
  let ok: unknown = '%%qty%%';
  for (let i = 0; i < 31; i++) ok = [ok];
  assert.doesNotThrow(() => params({ ok }));
  const big = 'y'.repeat(40 * 1024);
  const src = sources({ payload: { parameters: {}, big } });
  assert.equal(
    (
      params({ a: '%%$.big%%%%$.big%%' }, {}, sources({ payload: { parameters: {}, big: 'y'.repeat(1000) } }))
        .a as string
    ).length,
    2000,
  );
  assert.throws(() => params({ a: '%%$.big%%%%$.big%%' }, {}, src), code('INJECT_UNRESOLVED'));
  const half = sources({ payload: { parameters: {}, big: 'y'.repeat(32 * 1024) } });
  assert.equal((params({ a: '%%$.big%%%%$.big%%' }, {}, half).a as string).length, 64 * 1024, '64 KiB is allowed');
  const withProto = JSON.parse('{"__proto__": {"polluted": 1}, "constructor": 1, "fine": "%%qty%%"}') as Record<
    string,
    unknown
  >;
  assert.deepEqual(params(withProto), { fine: 3 });
});

test('without inject only action record slots are filled, from params, never scanned', () => {
  const s = settings({
    inject: false,
    parameters: {
      limit: '%%param_limit%%',
      text: 'at most %%param_limit%% of %%qty%%',
      d: '%%param_gone|5%%',
      n: '%%param_note%%',
    },
  });
  const r = injectSettings(s, sources({ params: { limit: 10, note: '${{REGION}}' } }));
  assert.deepEqual(r.settings.parameters, {
    limit: 10,
    text: 'at most 10 of %%qty%%',
    d: '5',
    n: '${{REGION}}',
  });
  // without params there are no slots: the placeholder stays as written
  assert.deepEqual(
    injectSettings(settings({ inject: false, parameters: { a: '%%param_limit%%' } }), sources()).settings.parameters,
    {
      a: '%%param_limit%%',
    },
  );
  assert.throws(
    () => injectSettings(settings({ inject: false, parameters: { a: '%%param_gone%%' } }), sources({ params: {} })),
    code('INJECT_UNRESOLVED'),
  );
  // with inject, slots and the other placeholders are filled in the same pass
  const both = injectSettings(
    settings({ parameters: { t: '%%param_limit%%/%%$.root%%' } }),
    sources({ params: { limit: 2 } }),
  );
  assert.equal(both.settings.parameters['t'], '2/R');
});
