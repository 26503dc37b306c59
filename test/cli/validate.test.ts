import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

const CLI = join('dist', 'src', 'cli', 'main.js');
const sagaway = (...args: string[]) =>
  spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    // examples/distributed reads its NATS credentials from the environment, as its README sets them
    env: {
      ...process.env,
      SAGAWAY_TEST_UNSET_URL: undefined,
      NATS_USER: 'gateway',
      NATS_PASS: 'gateway-password',
    } as NodeJS.ProcessEnv,
  });

describe('sagaway validate', () => {
  const examples = readdirSync('examples', { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) =>
      readdirSync(join('examples', d.name))
        .filter((f) => f === 'sagaway.yaml')
        .map((f) => join('examples', d.name, f)),
    );
  test('there are examples to check', () => assert.ok(examples.length >= 1));
  for (const file of examples) {
    test(`exits 0 on ${file}`, () => {
      const r = sagaway('validate', '--config', file);
      assert.equal(r.status, 0, r.stderr + r.stdout);
      assert.match(r.stdout, /^ok: /m);
    });
  }

  // Each broken file, and the FILE:LINE:COL PATH: message line expected for it.
  const broken: [string, RegExp][] = [
    [
      'missing-version.yaml',
      /missing-version\.yaml:12:15 runners\.todo\.sagas\[0\]\.steps\[1\]\.eventMeta\.version: required/,
    ],
    [
      'unknown-link.yaml',
      /unknown-link\.yaml:8:53 runners\.todo\.sagas\[0\]\.steps\[0\]\.links\[0\]\.to: unknown step "nowhere"/,
    ],
    ['bad-types.yaml', /bad-types\.yaml:2:9 gateway\.port: must be integer/],
    ['bad-types.yaml', /bad-types\.yaml:3:26 gateway\.stream\.defaultWait: must be milliseconds/],
    ['bad-types.yaml', /bad-types\.yaml:5:\d+ states\.t\.type: unknown type/],
    ['bad-types.yaml', /bad-types\.yaml:10:5 runners\.todo\.colour: unknown property/],
    ['syntax.yaml', /syntax\.yaml:\d+:\d+ \(root\): /],
    [
      'env-missing.yaml',
      /env-missing\.yaml:2:\d+ states\.orders\.url: environment variable SAGAWAY_TEST_UNSET_URL is not set/,
    ],
    [
      'proto-path.yaml',
      /proto-path\.yaml:11:\d+ runners\.todo\.sagas\[0\]\.steps\[1\]\.eventMeta\.outputElement: invalid path .*not allowed/,
    ],
    [
      'wrong-version.yaml',
      /wrong-version\.yaml:13:\d+ runners\.todo\.sagas\[0\]\.steps\[1\]\.eventMeta\.version: .*ACTION_VERSION_UNSUPPORTED/,
    ],
    ['saga-file.yaml', /sagas\/one\.yaml:5:\d+ steps\[1\]\.http: must be <= 599/],
    [
      'bad-schema.yaml',
      /bad-schema\.yaml:10:28 runners\.todo\.sagas\[0\]\.inputSchema\.properties\.title\.type: must be equal to one of the allowed values: "array", /,
    ],
    [
      'bad-schema.yaml',
      /bad-schema\.yaml:18:21 runners\.todo\.sagas\[1\]\.outputSchema\.requried: unknown keyword: "requried"/,
    ],
    ['bad-schema.yaml', /schemas\/todo-broken\.json:4:11 properties\.id: inputSchema: unknown format "uuidd"$/m],
    [
      'share-all-user.yaml',
      /share-all-user\.yaml:12:\d+ runners\.todo\.sagas\[0\]\.steps\[1\]\.expression: saga "mine" reads the user .* share: all/,
    ],
  ];
  for (const [file, expected] of broken) {
    test(`exits 1 on ${file}, printing ${expected.source.slice(0, 50)}`, () => {
      const r = sagaway('validate', '--config', join('test', 'fixtures', 'broken', file));
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.match(r.stderr, expected);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    });
  }
  test('a missing file is exit 1 with a located message', () => {
    const r = sagaway('validate', '--config', 'test/fixtures/broken/nope.yaml');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /nope\.yaml:1:1 \(root\): cannot read file \(ENOENT\)/);
  });
  test('usage errors are exit 2', () => {
    assert.equal(sagaway('frobnicate').status, 2);
    assert.equal(sagaway('validate', '--nope').status, 2);
  });
});
