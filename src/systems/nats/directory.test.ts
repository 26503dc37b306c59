import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Directory, EXPIRY_FACTOR, type Advertisement } from './directory.js';
import { Names, token } from './names.js';

function ad(over: Partial<Advertisement>): Advertisement {
  return {
    v: 1,
    instance: 'i1',
    runner: 'pricing',
    deployment: '1',
    system: 'bus',
    streams: { prices: { handler: 'p', dynamic: false } },
    handlers: { p: { Quote: [0, 2] } },
    actions: [],
    ...over,
  };
}

/** The advertisement interval of these directories (systems.X.advertiseInterval's default). */
const ADVERTISE_INTERVAL_MS = 2000;

const meta = (m: Record<string, unknown> = {}) => ({ action: 'Quote', version: 2, ...m });

test('targets: one per live (runner, deployment); replicas of a deployment count once', () => {
  const d = new Directory(ADVERTISE_INTERVAL_MS);
  d.accept(ad({ instance: 'a' }));
  d.accept(ad({ instance: 'b' }));
  d.accept(ad({ instance: 'c', deployment: '2' }));
  const r = d.targets('bus', 'prices', meta());
  assert.ok('targets' in r);
  assert.deepEqual(r.targets.map((t) => `${t.runner}/${t.deployment}`).sort(), ['pricing/1', 'pricing/2']);
});

test('targets: the deployments list restricts; an unknown one is RUNNER_UNAVAILABLE', () => {
  const d = new Directory(ADVERTISE_INTERVAL_MS);
  d.accept(ad({ instance: 'a' }));
  d.accept(ad({ instance: 'c', deployment: '2' }));
  const r = d.targets('bus', 'prices', meta({ deployments: ['2'] }));
  assert.ok('targets' in r && r.targets.length === 1 && r.targets[0]!.deployment === '2');
  const none = d.targets('bus', 'prices', meta({ deployments: ['9'] }));
  assert.ok('error' in none && none.error.code === 'RUNNER_UNAVAILABLE');
  const other = d.targets('other-system', 'prices', meta());
  assert.ok('error' in other && other.error.code === 'RUNNER_UNAVAILABLE');
});

test('offers: a version nobody offers is ACTION_VERSION_UNSUPPORTED; a deployment without it is left out', () => {
  const d = new Directory(ADVERTISE_INTERVAL_MS);
  d.accept(ad({ instance: 'a' }));
  d.accept(ad({ instance: 'c', deployment: '2', handlers: { p: { Quote: [0] } } }));
  const only1 = d.targets('bus', 'prices', meta());
  assert.ok('targets' in only1);
  assert.deepEqual(only1.targets, [{ runner: 'pricing', deployment: '1' }]);
  const v7 = d.targets('bus', 'prices', meta({ version: 7 }));
  assert.ok('error' in v7);
  assert.equal(v7.error.code, 'ACTION_VERSION_UNSUPPORTED');
  const act = d.targets('bus', 'prices', meta({ action: 'Nope' }));
  assert.ok('error' in act && act.error.code === 'ACTION_NOT_FOUND');
});

test('offers: structural aliases, dynamic bindings and inject are left to the runner', () => {
  const d = new Directory(ADVERTISE_INTERVAL_MS);
  d.accept(ad({ actions: ['QuoteEUR'] }));
  assert.ok('targets' in d.targets('bus', 'prices', meta({ action: 'QuoteEUR', version: 0 })));
  assert.ok('targets' in d.targets('bus', 'prices', meta({ version: 9, inject: true })));
  const dyn = new Directory(ADVERTISE_INTERVAL_MS);
  dyn.accept(ad({ streams: { prices: { dynamic: true } } }));
  assert.ok('targets' in dyn.targets('bus', 'prices', meta({ version: 9 })));
});

test('expiry and goodbye', () => {
  const d = new Directory(ADVERTISE_INTERVAL_MS);
  const t0 = 1_000_000;
  d.accept(ad({ instance: 'a' }), t0);
  assert.equal(d.isLive('a', t0 + ADVERTISE_INTERVAL_MS), true);
  assert.equal(d.isLive('a', t0 + ADVERTISE_INTERVAL_MS * EXPIRY_FACTOR + 1), false);
  d.accept(ad({ instance: 'b' }));
  d.accept({ ...ad({ instance: 'b' }), bye: true });
  assert.equal(d.isLive('b'), false);
  d.accept({ v: 1, instance: 'x' }); // malformed: ignored
  assert.equal(d.isLive('x'), false);
});

test('names: subject tokens never carry . * > or spaces; consumers are distinct per stream, runner and deployment', () => {
  assert.equal(token('prices'), 'prices');
  assert.match(token('a.b *>'), /^h[0-9a-f]{24}$/);
  const n = new Names('sw');
  assert.equal(n.event('prices', 'pricing', '2'), 'sw.ev.prices.pricing.2');
  assert.notEqual(n.consumer('a_b', 'c', '1'), n.consumer('a', 'b_c', '1'));
  assert.match(n.consumer('s', 'r', 'd'), /^sw_ev_[0-9a-f]{20}$/);
});

test('targets: the answer for a step is kept until an advertisement arrives or one it used expires', () => {
  const d = new Directory(ADVERTISE_INTERVAL_MS);
  const m = meta();
  const t0 = Date.now();
  d.accept(ad({ instance: 'a' }), t0);
  const first = d.targets('bus', 'prices', m);
  assert.equal(d.targets('bus', 'prices', m), first, 'the same answer object: looked up once');
  d.accept(ad({ instance: 'b', deployment: '2' }), t0);
  const second = d.targets('bus', 'prices', m);
  assert.notEqual(second, first, 'a new advertisement is seen at once');
  assert.ok('targets' in second && second.targets.length === 2);
  // an entry that has expired is not served from the cache: accepted long ago, it expires now
  const d2 = new Directory(ADVERTISE_INTERVAL_MS);
  d2.accept(ad({ instance: 'old' }), Date.now() - ADVERTISE_INTERVAL_MS * EXPIRY_FACTOR + 30);
  assert.ok('targets' in d2.targets('bus', 'prices', m));
  const until = Date.now() + 60;
  while (Date.now() < until) {
    /* wait past its expiry */
  }
  assert.ok('error' in d2.targets('bus', 'prices', m), 'expired: no live runner');
});
