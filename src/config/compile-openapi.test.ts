import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { compileOpenApi } from './compile-openapi.js';

const dir = mkdtempSync(join(tmpdir(), 'sagaway-openapi-settings-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('off with false or enabled: false; servers and license as configured', () => {
  assert.equal(compileOpenApi(false, dir), false);
  assert.equal(compileOpenApi({ enabled: false, license: 'MIT' }, dir), false);
  assert.deepEqual(compileOpenApi({ servers: [{ url: 'https://api.x.dev' }], license: 'MIT OR Apache-2.0' }, dir), {
    servers: [{ url: 'https://api.x.dev' }],
    license: { name: 'MIT OR Apache-2.0', identifier: 'MIT OR Apache-2.0' },
  });
  assert.deepEqual(compileOpenApi({ license: 'Proprietary, see LICENSE.txt' }, dir), {
    license: { name: 'Proprietary, see LICENSE.txt' },
  });
});

test("without one, the license of the nearest package.json at or above the config's folder", () => {
  mkdirSync(join(dir, 'project', 'config'), { recursive: true });
  writeFileSync(join(dir, 'project', 'package.json'), JSON.stringify({ name: 'p', license: 'ISC' }));
  assert.deepEqual(compileOpenApi(undefined, join(dir, 'project', 'config')), {
    license: { name: 'ISC', identifier: 'ISC' },
  });
  mkdirSync(join(dir, 'closed'), { recursive: true });
  writeFileSync(join(dir, 'closed', 'package.json'), JSON.stringify({ name: 'c', license: 'UNLICENSED' }));
  assert.deepEqual(compileOpenApi(true, join(dir, 'closed')), {}, 'UNLICENSED names no license to publish');
});
