import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { glob } from 'tinyglobby';
import { yamlScriptText } from './write-yaml-script.js';
import { YAML_PARSE_OPTIONS, YAML_SCRIPT, yamlParser } from './yaml-script.js';

const ROOT = new URL('../../../', import.meta.url);
const pkg = createRequire(import.meta.url)('yaml') as typeof import('yaml');

test('the shipped YAML script holds the installed yaml package (run `npm run build` when this fails)', () => {
  assert.equal(readFileSync(YAML_SCRIPT, 'utf8'), yamlScriptText());
});

test('the YAML script is ASCII and its code cache is accepted by the Node that built it', (t) => {
  assert.ok(!/[\u0080-\uffff]/.test(readFileSync(YAML_SCRIPT, 'latin1')), 'read as latin1 at run time: ASCII only');
  const { node } = JSON.parse(readFileSync(`${YAML_SCRIPT}.cache.json`, 'utf8')) as { node: string };
  if (node !== process.version) return t.skip(`the cache was written by Node ${node}: this Node compiles the source`);
  // checked in a plain node, as `sagaway` runs (the test runner's flags may differ from the build's)
  const out = execFileSync(process.execPath, [
    '-e',
    `const vm = require('node:vm'), fs = require('node:fs'); const f = ${JSON.stringify(YAML_SCRIPT)};` +
      "const s = new vm.Script(fs.readFileSync(f, 'latin1'), { filename: f, cachedData: fs.readFileSync(f + '.cache') });" +
      'process.stdout.write(String(s.cachedDataRejected))',
  ]).toString();
  assert.equal(out, 'false');
});

/** What a parser makes of a text: the value (or the error toJS throws), the errors and warnings, where. */
function parsed(yaml: typeof import('yaml'), text: string) {
  const lineCounter = new yaml.LineCounter();
  const doc = yaml.parseDocument(text, { ...YAML_PARSE_OPTIONS, lineCounter });
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    value = `throws: ${(e as Error).message}`;
  }
  const where = (e: { pos: [number, number]; code: string; message: string }) => ({
    at: lineCounter.linePos(e.pos[0]),
    code: e.code,
    message: e.message,
  });
  return { value, errors: doc.errors.map(where), warnings: doc.warnings.map(where), map: yaml.isMap(doc.contents) };
}

test('the script parses every example and fixture, and broken YAML, as the yaml package does', async () => {
  const parser = yamlParser();
  assert.notEqual(parser.parseDocument, pkg.parseDocument, 'the script is run, not the package');
  const files = await glob(['examples/**/*.yaml', 'test/fixtures/**/*.yaml'], { cwd: ROOT.pathname, absolute: true });
  assert.ok(files.length >= 20, `found ${files.length} files`);
  const broken = [
    'a: [1, 2',
    'a: 1\na: 2',
    'x: &a [*a]',
    'k: "\\u2026 é"\n- list',
    '{ "json": true, }',
    'a: !!binary AA==',
  ];
  for (const text of [...files.map((f) => readFileSync(f, 'utf8')), ...broken])
    assert.deepEqual(parsed(parser, text), parsed(pkg, text), text.slice(0, 80));
});
