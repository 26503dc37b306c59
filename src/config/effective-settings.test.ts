import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StreamBindingSettings } from './settings.js';
import { effectiveSettingsFor } from './effective-settings.js';

// A meta that crossed NATS is a fresh, unfrozen object per event: its merge is cached by its text.
const actions = Object.freeze({});
const binding: StreamBindingSettings = Object.freeze({
  name: 'items',
  system: 'bus',
  handler: 'h',
  meta: { 'parameters.a': { override: 'bound' } },
});
const decoded = (extra: Record<string, unknown> = {}) =>
  JSON.parse(
    JSON.stringify({ action: 'Get', version: 0, inputElement: 'p', parameters: { a: 'step', b: 1 }, ...extra }),
  );

test('equal metas decoded apart share one frozen merge; another meta or binding gets its own', () => {
  const one = effectiveSettingsFor(decoded(), binding, actions);
  assert.deepEqual(one, {
    handler: 'h',
    action: 'Get',
    version: 0,
    inputElement: 'p',
    parameters: { a: 'bound', b: 1 },
    inject: false,
  });
  assert.equal(effectiveSettingsFor(decoded(), binding, actions), one);
  assert.ok(Object.isFrozen(one) && Object.isFrozen(one.parameters));
  const other = effectiveSettingsFor(decoded({ outputElement: '$.x' }), binding, actions);
  assert.notEqual(other, one);
  assert.equal(other.outputElement, '$.x');
  const unbound = effectiveSettingsFor(decoded(), undefined, actions);
  assert.equal(unbound.handler, undefined);
  assert.equal(unbound.parameters['a'], 'step');
});

test('the text cache stays bounded whatever metas arrive', () => {
  const first = effectiveSettingsFor(decoded({ domain: 'd0' }), binding, actions);
  for (let i = 1; i <= 300; i++) effectiveSettingsFor(decoded({ domain: `d${i}` }), binding, actions);
  // the first text was dropped when the cache started over: a fresh, equal merge
  const again = effectiveSettingsFor(decoded({ domain: 'd0' }), binding, actions);
  assert.notEqual(again, first);
  assert.deepEqual(again, first);
});
