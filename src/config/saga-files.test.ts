import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { glob } from 'tinyglobby';
import { sagaFiles } from './saga-files.js';

const dir = await mkdtemp(join(tmpdir(), 'sagaway-saga-files-'));
after(() => rm(dir, { recursive: true, force: true }));

test('the fast path lists what tinyglobby lists for every kind of entry', async () => {
  await mkdir(join(dir, 'sagas', 'sub.yaml'), { recursive: true });
  await mkdir(join(dir, 'sagas', 'deep'), { recursive: true });
  for (const f of ['a.yaml', 'b.yml', '.hidden.yaml', 'c.yaml.bak', 'x(1).yaml', 'deep/d.yaml'])
    await writeFile(join(dir, 'sagas', f), 'sagas: []\n');
  await symlink(join(dir, 'sagas', 'a.yaml'), join(dir, 'sagas', 'link.yaml'));
  const entries = [
    './sagas/*.yaml',
    'sagas/*.yaml',
    'sagas/*.y?ml',
    'sagas/*',
    'sagas/a.yaml',
    'sagas/.hidden.yaml',
    'sagas/.*.yaml',
    'sagas/sub.yaml',
    'sagas/x(1).yaml',
    'sagas/**/*.yaml',
    'sagas/{a,b}.y*',
    'nowhere/*.yaml',
    `${dir}/sagas/*.yaml`,
  ];
  for (const entry of entries) {
    const expected = (await glob(entry, { cwd: dir, absolute: true, onlyFiles: true })).sort();
    assert.deepEqual(await sagaFiles(entry, dir), expected, entry);
  }
});
