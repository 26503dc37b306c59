#!/usr/bin/env node
// Import cycles among the shipped files of src/ (tests excluded): `node scripts/import-cycles.mjs`
// prints each cycle and exits 1 when there is one. The layer rules in eslint.config.js keep
// folders in order; this keeps the files inside a folder in order too. Type-only imports count:
// a cycle of types is still a knot a reader has to untie.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const IMPORT_RE = /^\s*(?:import|export)\b[^'"]*?\bfrom\s+'(\.{1,2}\/[^']+)'/gm;

/** The relative imports of every file: Map<file, files it imports> (paths as given). */
export function importGraph(dir) {
  const graph = new Map();
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) {
        const text = readFileSync(full, 'utf8');
        const targets = [];
        for (const m of text.matchAll(IMPORT_RE)) targets.push(resolve(dirname(full), m[1].replace(/\.js$/, '.ts')));
        graph.set(full, targets);
      }
    }
  };
  walk(dir);
  return graph;
}

/** Every cycle of a graph, one per strongly connected component with more than one file (or a self-import). */
export function findCycles(graph) {
  let index = 0;
  const stack = [];
  const onStack = new Set();
  const idx = new Map();
  const low = new Map();
  const cycles = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return cycles;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const cycles = findCycles(importGraph(join(root, 'src')));
  for (const c of cycles) console.log(`import cycle: ${c.map((f) => relative(root, f)).join(' <-> ')}`);
  process.exit(cycles.length ? 1 : 0);
}
