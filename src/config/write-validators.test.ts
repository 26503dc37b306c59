import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Ajv, type ValidateFunction } from 'ajv';
import { glob } from 'tinyglobby';
import { parse } from 'yaml';
import { ConfigSchema, EventMetaSchema, SagaFileSchema } from './schema.js';
import * as generated from './validators.generated.js';
import {
  AJV_OPTIONS,
  META_VALIDATOR_FILE,
  metaValidatorText,
  VALIDATORS_FILE,
  VALIDATORS_SCRIPT,
  validatorsModuleText,
  validatorsText,
} from './write-validators.js';

const ROOT = new URL('../../../', import.meta.url);

test('the shipped validators are generated from the current schema (run `npm run build` when this fails)', () => {
  assert.equal(readFileSync(VALIDATORS_SCRIPT, 'utf8'), validatorsText());
  assert.equal(readFileSync(VALIDATORS_FILE, 'utf8'), validatorsModuleText());
  assert.equal(readFileSync(META_VALIDATOR_FILE, 'utf8'), metaValidatorText());
});

test('the validators script is ASCII and its code cache is accepted by the Node that built it', (t) => {
  const source = readFileSync(VALIDATORS_SCRIPT, 'latin1');
  assert.ok(!/[\u0080-\uffff]/.test(source), 'read as latin1 at run time: ASCII only');
  const { node } = JSON.parse(readFileSync(`${VALIDATORS_SCRIPT}.cache.json`, 'utf8')) as { node: string };
  if (node !== process.version) return t.skip(`the cache was written by Node ${node}: this Node compiles the source`);
  // the test runner's own flags may differ from the build's (V8 would then reject the cache):
  // the cache is checked in a plain node, as `sagaway` runs
  const out = execFileSync(process.execPath, [
    '-e',
    `const vm = require('node:vm'), fs = require('node:fs'); const f = ${JSON.stringify(VALIDATORS_SCRIPT)};` +
      "const s = new vm.Script(fs.readFileSync(f, 'latin1'), { filename: f, cachedData: fs.readFileSync(f + '.cache') });" +
      'process.stdout.write(String(s.cachedDataRejected))',
  ]).toString();
  assert.equal(out, 'false');
});

test('eventMetaFields are the properties of the eventMeta schema', () => {
  assert.deepEqual(generated.eventMetaFields, Object.keys(EventMetaSchema.properties));
});

/** What a validator says about a value: valid or not, its errors, and the value after coercion. */
function verdict(v: ValidateFunction, value: unknown) {
  const data: unknown = structuredClone(value);
  const ok = v(data);
  const errors = (v.errors ?? []).map((e) => ({
    path: e.instancePath,
    keyword: e.keyword,
    params: e.params,
    message: e.message,
    description: (e.parentSchema as { description?: string } | undefined)?.description,
  }));
  return { ok, errors, data };
}

test('the generated validators judge every example and broken fixture as Ajv compiling the schema does', async () => {
  const ajv = new Ajv(AJV_OPTIONS);
  const runtime = { config: ajv.compile(ConfigSchema), sagaFile: ajv.compile(SagaFileSchema) };
  const cwd = ROOT.pathname;
  const configs = await glob(['examples/*/sagaway.yaml', 'test/fixtures/*/*.yaml'], { cwd, absolute: true });
  const sagaFiles = await glob(['examples/*/sagas/*.yaml', 'test/fixtures/*/sagas/*.yaml'], { cwd, absolute: true });
  assert.ok(
    configs.length >= 10 && sagaFiles.length >= 4,
    `found ${configs.length} configs, ${sagaFiles.length} saga files`,
  );
  let invalid = 0;
  const cases: [ValidateFunction, ValidateFunction, string[]][] = [
    [runtime.config, generated.config, configs],
    [runtime.sagaFile, generated.sagaFile, sagaFiles],
  ];
  for (const [compiled, shipped, files] of cases) {
    for (const file of files) {
      let value: unknown;
      try {
        value = parse(readFileSync(file, 'utf8'));
      } catch {
        continue; // a YAML syntax fixture never reaches the validator
      }
      const expected = verdict(compiled, value);
      assert.deepEqual(verdict(shipped, value), expected, file);
      if (!expected.ok) invalid++;
    }
  }
  assert.ok(invalid >= 2, `the broken fixtures exercise the error path (${invalid} invalid)`);
});
