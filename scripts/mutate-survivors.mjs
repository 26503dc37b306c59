#!/usr/bin/env node
// Lists the surviving (and no-coverage) mutants of reports/mutation/MODULE.json, one line each:
//   node scripts/mutate-survivors.mjs MODULE
import { readFileSync } from 'node:fs';

const name = process.argv[2];
const report = JSON.parse(readFileSync(`reports/mutation/${name}.json`, 'utf8'));
const counts = {};
for (const [file, { source, mutants }] of Object.entries(report.files)) {
  const lines = source.split('\n');
  for (const m of mutants) {
    counts[m.status] = (counts[m.status] ?? 0) + 1;
    if (m.status !== 'Survived' && m.status !== 'NoCoverage') continue;
    const { start, end } = m.location;
    // the mutated span itself (Stryker columns are 1-based)
    const span =
      start.line === end.line
        ? lines[start.line - 1].slice(start.column - 1, end.column - 1)
        : `${lines[start.line - 1].slice(start.column - 1)} ...`;
    const replacement = (m.replacement ?? '').replace(/\s+/g, ' ');
    console.log(
      `${file}:${start.line}:${start.column} ${m.mutatorName}: ${span.trim()}  =>  ${replacement}`.slice(0, 300),
    );
  }
}
const killed = (counts.Killed ?? 0) + (counts.Timeout ?? 0);
const valid = killed + (counts.Survived ?? 0) + (counts.NoCoverage ?? 0);
console.log(JSON.stringify(counts), `score ${((100 * killed) / valid).toFixed(2)}%`);
