import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { silentLogger } from '../core/logger.js';
import { createState } from './index.js';

const dir = await mkdtemp(join(tmpdir(), 'sagaway-states-'));
after(() => rm(dir, { recursive: true, force: true }));
const log = silentLogger();

test('createState: a memory state is seeded from its file', async () => {
  const seed = join(dir, 'actions.json');
  await writeFile(
    seed,
    JSON.stringify([
      { id: 'a1', data: { handler: 'read', action: 'Get', version: 0 } },
      { id: 'a2', data: {} },
    ]),
  );
  const s = createState({ type: 'memory', alias: 'actions', queries: {}, seed }, log);
  await s.init();
  assert.equal(s.kind, 'memory');
  assert.deepEqual(await s.get('a1'), { id: 'a1', version: 1, data: { handler: 'read', action: 'Get', version: 0 } });
  assert.equal((await s.list()).list.length, 2);
  await s.close();
  await assert.rejects(s.get('a1'), { code: 'STATE_UNAVAILABLE' });
});

test('createState: a SQLite state is seeded only while it is empty', async () => {
  const seed = join(dir, 'seed.json');
  await writeFile(seed, JSON.stringify([{ id: 'x', data: { n: 1 } }]));
  const settings = {
    type: 'sqlite' as const,
    alias: 'things',
    file: join(dir, 'things.db'),
    table: 'things',
    queries: {},
    seed,
  };
  const a = createState(settings, log);
  await a.init();
  await a.update('x', { n: 2 });
  await a.close();
  const b = createState(settings, log);
  await b.init();
  assert.deepEqual(await b.get('x'), { id: 'x', version: 2, data: { n: 2 } });
  await b.close();
});

test('createState: a malformed seed file is CONFIG_INVALID without its content in the message', async () => {
  for (const [name, content] of [
    ['not-json.json', '{"id": "secret-value"'],
    ['not-array.json', '{"id": "a"}'],
    ['bad-entry.json', '[{"id": 7, "data": {}}]'],
  ] as const) {
    const seed = join(dir, name);
    await writeFile(seed, content);
    const s = createState({ type: 'memory', alias: 'm', queries: {}, seed }, log);
    await assert.rejects(s.init(), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'CONFIG_INVALID');
      assert.ok(!err.message.includes('secret-value'));
      return true;
    });
  }
  const missing = createState({ type: 'memory', alias: 'm', queries: {}, seed: join(dir, 'nope.json') }, log);
  await assert.rejects(missing.init(), { code: 'CONFIG_INVALID' });
});

test('createState: operations before init open the state on first use', async () => {
  const s = createState({ type: 'sqlite', alias: 'lazy', file: join(dir, 'lazy.db'), table: 'lazy', queries: {} }, log);
  const r = await s.create('a', { ok: true });
  assert.equal(r.version, 1);
  await s.close();
});

test('createState: a process whose states are memory never loads better-sqlite3 or pg', async () => {
  const index = fileURLToPath(new URL('./index.js', import.meta.url));
  const script = `
    import { createRequire } from 'node:module';
    const { createState } = await import(${JSON.stringify(index)});
    const { silentLogger } = await import(${JSON.stringify(fileURLToPath(new URL('../core/logger.js', import.meta.url)))});
    const s = createState({ type: 'memory', alias: 'm', queries: {} }, silentLogger());
    await s.init();
    await s.create('a', {});
    const cache = Object.keys(createRequire(import.meta.url).cache);
    console.log(JSON.stringify(cache.filter((k) => /better-sqlite3|[\\\\/]pg[\\\\/]/.test(k))));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
  assert.deepEqual(JSON.parse(stdout.trim()), []);
});
