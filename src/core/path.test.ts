import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { formatSegments, parsePath, readPath, safeAssign, writePath, type Segment } from './path.js';
import { SagawayError } from './errors.js';

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as SagawayError).code;
  }
  return 'no error';
};

describe('parsePath', () => {
  test('keys, indexes, $ and $.', () => {
    assert.deepEqual(parsePath('parameters.items[0].sku'), {
      text: 'parameters.items[0].sku',
      root: false,
      segments: ['parameters', 'items', 0, 'sku'],
    });
    assert.deepEqual(parsePath('$.a[1][2]').segments, ['a', 1, 2]);
    assert.equal(parsePath('$.a').root, true);
    assert.deepEqual(parsePath('$'), { text: '$', root: true, segments: [] });
  });
  test('refuses prototype keys anywhere', () => {
    for (const p of ['__proto__', 'a.__proto__.b', '$.constructor', 'a.prototype', 'x[0].constructor']) {
      assert.equal(
        code(() => parsePath(p)),
        'INVALID_PATH',
        p,
      );
    }
  });
  test('refuses bad syntax and anything like an expression', () => {
    for (const p of [
      '',
      '$.',
      'a.',
      '.a',
      'a..b',
      'a[',
      'a[x]',
      'a[-1]',
      'a[01]',
      'a]',
      'a[*]',
      'a[?(@.x)]',
      'a[1e3]',
      '$..a',
    ]) {
      assert.equal(
        code(() => parsePath(p)),
        'INVALID_PATH',
        p,
      );
    }
  });
  test('limits: 256 characters, 32 segments, index 100000', () => {
    assert.equal(
      code(() => parsePath('a'.repeat(257))),
      'INVALID_PATH',
    );
    assert.doesNotThrow(() => parsePath('a'.repeat(256)));
    assert.equal(
      code(() => parsePath(Array(33).fill('a').join('.'))),
      'INVALID_PATH',
    );
    assert.doesNotThrow(() => parsePath(Array(32).fill('a').join('.')));
    assert.equal(
      code(() => parsePath('a[100001]')),
      'INVALID_PATH',
    );
  });
});

describe('readPath / writePath', () => {
  test('reads own properties only', () => {
    assert.equal(readPath({}, ['toString']), undefined);
    assert.equal(readPath({ a: [1, 2] }, ['a', 'length']), undefined);
    assert.equal(readPath({ a: [1, 2] }, ['a', 1]), 2);
  });
  test('creates objects for keys and arrays for indexes', () => {
    const o: Record<string, unknown> = {};
    writePath(o, ['a', 'b', 0, 'c'], 1);
    assert.deepEqual(o, { a: { b: [{ c: 1 }] } });
  });
  test('conflicts are errors, not silent overwrites', () => {
    assert.equal(
      code(() => writePath({ a: 'text' }, ['a', 'b'], 1)),
      'OUTPUT_PATH_CONFLICT',
    );
    assert.equal(
      code(() => writePath({ a: [] }, ['a', 'b'], 1)),
      'OUTPUT_PATH_CONFLICT',
    );
    assert.equal(
      code(() => writePath({ a: [] }, ['a', 3], 1)),
      'OUTPUT_PATH_CONFLICT',
    );
  });
  test('safeAssign skips __proto__ own keys (from JSON.parse)', () => {
    const target: Record<string, unknown> = {};
    safeAssign(target, JSON.parse('{"__proto__":{"polluted":1},"ok":2}') as Record<string, unknown>);
    assert.equal(Object.getPrototypeOf(target), Object.prototype);
    assert.equal((target as { polluted?: number }).polluted, undefined);
    assert.equal(target['ok'], 2);
  });
});

// ---- property test against a reference model -------------------------------------------------
// The model is written independently: immutable, recursive, with the same documented rules
// (create a container for a missing or null child by the next segment's kind; an index may be at
// most the length; anything else in the way is a conflict).
type J = unknown;
const CONFLICT = Symbol('conflict');
function modelWrite(node: J, segs: readonly Segment[], value: J): J | typeof CONFLICT {
  if (segs.length === 0) return value;
  const [seg, ...rest] = segs as [Segment, ...Segment[]];
  if (typeof seg === 'number') {
    if (!Array.isArray(node) || seg > node.length) return CONFLICT;
    const child = seg < node.length ? node[seg] : undefined;
    const base =
      rest.length === 0
        ? undefined
        : child === undefined || child === null
          ? typeof rest[0] === 'number'
            ? []
            : {}
          : child;
    if (rest.length > 0 && (typeof base !== 'object' || base === null)) return CONFLICT;
    const written = modelWrite(base, rest, value);
    if (written === CONFLICT) return CONFLICT;
    const copy = [...node];
    copy[seg] = written;
    return copy;
  }
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return CONFLICT;
  const obj = node as Record<string, J>;
  const child = Object.hasOwn(obj, seg) ? obj[seg] : undefined;
  const base =
    rest.length === 0
      ? undefined
      : child === undefined || child === null
        ? typeof rest[0] === 'number'
          ? []
          : {}
        : child;
  if (rest.length > 0 && (typeof base !== 'object' || base === null)) return CONFLICT;
  const written = modelWrite(base, rest, value);
  if (written === CONFLICT) return CONFLICT;
  return { ...obj, [seg]: written };
}
function modelRead(node: J, segs: readonly Segment[]): J {
  let n = node;
  for (const s of segs) {
    if (typeof s === 'number') n = Array.isArray(n) && s < n.length ? n[s] : undefined;
    else
      n =
        typeof n === 'object' && n !== null && !Array.isArray(n) && Object.hasOwn(n, s)
          ? (n as Record<string, J>)[s]
          : undefined;
  }
  return n;
}

const segArb: fc.Arbitrary<Segment> = fc.oneof(fc.constantFrom('a', 'b', 'c'), fc.integer({ min: 0, max: 2 }));
const pathArb = fc
  .tuple(fc.constantFrom('a', 'b', 'c'), fc.array(segArb, { maxLength: 4 }))
  .map(([h, t]) => [h, ...t] as Segment[]);
const valueArb = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 3 }),
  fc.constant(null),
  fc.constant({}),
  fc.constant([]),
);

describe('path property tests', () => {
  test('writePath/readPath agree with the reference model', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(pathArb, valueArb), { maxLength: 8 }),
        fc.array(pathArb, { maxLength: 6 }),
        (writes, reads) => {
          const real: Record<string, unknown> = {};
          let model: J = {};
          for (const [segs, value] of writes) {
            const next = modelWrite(model, segs, structuredClone(value));
            let threw = false;
            try {
              writePath(real, segs, structuredClone(value));
            } catch (e) {
              threw = true;
              assert.equal((e as SagawayError).code, 'OUTPUT_PATH_CONFLICT');
            }
            assert.equal(threw, next === CONFLICT, `write ${formatSegments(segs)}`);
            if (next !== CONFLICT) model = next;
            assert.deepEqual(real, model);
          }
          for (const segs of [...reads, ...writes.map((w) => w[0])])
            assert.deepEqual(readPath(real, segs), modelRead(model, segs));
        },
      ),
      { numRuns: 500 },
    );
  });
  test('format(parse(text)) is the text for every valid path', () => {
    const key = fc
      .stringMatching(/^[a-z_$][a-z0-9_-]{0,6}$/)
      .filter((k) => !['__proto__', 'prototype', 'constructor'].includes(k));
    const seg = fc.tuple(key, fc.array(fc.integer({ min: 0, max: 999 }), { maxLength: 2 }));
    fc.assert(
      fc.property(fc.array(seg, { minLength: 1, maxLength: 8 }), (parts) => {
        const text = parts.map(([k, idx]) => k + idx.map((i) => `[${i}]`).join('')).join('.');
        if (text.startsWith('$.') || text === '$') return;
        assert.equal(formatSegments(parsePath(text).segments), text);
      }),
    );
  });
});
