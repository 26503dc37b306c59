#!/usr/bin/env node
// Part of `npm run build`: tsc builds incrementally (tsconfig.json `incremental`) and never removes
// what it wrote for a source that has since moved or gone; a stale compiled test would still run.
// This removes every file of dist/src and dist/test whose .ts source no longer exists (a .d.ts
// source stands for a file written by a build step: config/validators.generated.js).
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const dist = join(root, 'dist');
const OUTPUT = /\.(?:js|js\.map|d\.ts|d\.ts\.map)$/;

function prune(dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      prune(path);
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
    } else if (OUTPUT.test(entry.name)) {
      const base = join(root, relative(dist, path)).replace(OUTPUT, '');
      if (!existsSync(`${base}.ts`) && !existsSync(`${base}.d.ts`)) rmSync(path);
    }
  }
}
for (const top of ['src', 'test']) prune(join(dist, top));
