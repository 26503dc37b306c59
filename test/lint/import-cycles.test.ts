import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/** scripts/import-cycles.mjs: no file of src/ imports itself through others. */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const { findCycles, importGraph } = (await import(join(root, 'scripts', 'import-cycles.mjs'))) as {
  findCycles(graph: Map<string, string[]>): string[][];
  importGraph(dir: string): Map<string, string[]>;
};

test('src/ has no import cycle', () => {
  const graph = importGraph(join(root, 'src'));
  assert.ok(graph.size > 100, `read ${graph.size} files`);
  assert.ok(
    [...graph.values()].some((targets) => targets.length > 3),
    'imports were found',
  );
  assert.deepEqual(findCycles(graph), []);
});

test('a cycle is found, with every file in it, and a file outside it is not', () => {
  const graph = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a']],
    ['d', ['a']],
    ['e', ['e']],
  ]);
  assert.deepEqual(findCycles(graph), [['a', 'b', 'c'], ['e']]);
});
