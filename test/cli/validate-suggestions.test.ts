import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sagaway } from './spawn.js';

/**
 * Issue 24 item 5: `validate` checks the built-in handlers' `domain` against the states and http
 * systems, suggests the closest handler, action and step id and lists what exists, one line per error.
 */

const F = 'test/fixtures/broken/';
const STEP = 'runners.todo.sagas[0].steps';

test('a wrong domain, action, handler and http system: one line each, with the closest name and the list', () => {
  const r = sagaway(['validate', '--config', `${F}typos.yaml`]);
  assert.equal(r.status, 1);
  assert.deepEqual(r.stderr.trimEnd().split('\n'), [
    `${F}typos.yaml:17:74 ${STEP}[1].eventMeta.domain: domain "slugs" names no state; did you mean "slug"? states: slug, todos (DOMAIN_NOT_FOUND)`,
    `${F}typos.yaml:21:50 ${STEP}[2].eventMeta.action: handler "write" has no action "Craete"; did you mean "Create"? actions: Create, Delete, Set, Update, Upsert (ACTION_NOT_FOUND)`,
    `${F}typos.yaml:25:35 ${STEP}[3].eventMeta.handler: handler "wirte" is not loaded by runner "todo"; did you mean "write"? loaded handlers: read, rest, write`,
    `${F}typos.yaml:29:79 ${STEP}[4].eventMeta.domain: domain "payment" names no http system; did you mean "payments"? http systems: payments (DOMAIN_NOT_FOUND)`,
    `${F}typos.yaml:33:24 ${STEP}[5].eventMeta.domain: read.GetList needs a domain: the alias of a state; states: slug, todos (DOMAIN_NOT_FOUND)`,
  ]);
});

test('an unknown link target: the closest step id and the steps there are', () => {
  const r = sagaway(['validate', '--config', `${F}typo-link.yaml`]);
  assert.equal(r.status, 1);
  assert.equal(
    r.stderr.trimEnd(),
    `${F}typo-link.yaml:7:53 ${STEP}[0].links[0].to: unknown step "dnoe"; did you mean "done"? steps: done, start`,
  );
});

test('an unset ${env:…} is one line, not followed by the schema saying the value is empty', () => {
  const r = sagaway(['validate', '--config', `${F}env-missing.yaml`], { SAGAWAY_TEST_UNSET_URL: undefined });
  assert.equal(r.status, 1);
  assert.deepEqual(r.stderr.trimEnd().split('\n'), [
    `${F}env-missing.yaml:2:34 states.orders.url: environment variable SAGAWAY_TEST_UNSET_URL is not set and has no default`,
  ]);
});

test('a domain written as an inject placeholder is left to run time; a declared one passes', () => {
  const r = sagaway(['validate', '--config', 'examples/todo/sagaway.yaml']);
  assert.equal(r.status, 0, r.stderr);
});
