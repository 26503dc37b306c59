import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

/**
 * The layer order of src/ is enforced by lint (eslint.config.js LAYERS): an import that breaks it
 * fails `npm run lint`. These fixtures are linted as if they were files of those folders.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

// The fixtures are not files of the TypeScript project: lint them without the type-checked rules.
const eslint = new ESLint({
  cwd: root,
  overrideConfig: {
    files: ['src/**/*.ts'],
    languageOptions: { parserOptions: { projectService: false, project: null } },
    rules: { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-misused-promises': 'off' },
  },
});

async function layerErrors(file: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: join(root, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

test('a state that imports the gateway breaks the layer order', async () => {
  const errors = await layerErrors(
    'src/states/fixture-layer.ts',
    "import { createGateway } from '../gateway/server.js';\nexport const x = createGateway;\n",
  );
  assert.equal(errors.length, 1);
  assert.match(errors[0]!, /layer order: states\/ may import only core, config/);
});

test('the gateway may not import the runner: it is handed the contracts of core/messages.ts', async () => {
  const errors = await layerErrors(
    'src/gateway/http/fixture-layer.ts',
    "import { firstStatus } from '../../runner/status.js';\nexport const f = firstStatus;\n",
  );
  assert.equal(errors.length, 1);
  assert.match(errors[0]!, /layer order: gateway\/ may import only core, saga, config, states, systems, handlers \(/);
  assert.deepEqual(
    await layerErrors(
      'src/gateway/http/fixture-layer.ts',
      "import type { StatusSource } from '../../core/messages.js';\nexport type S = StatusSource;\n",
    ),
    [],
  );
});

test('the saga engine may not import config, nor a nested folder reach up past its layer', async () => {
  assert.equal(
    (
      await layerErrors(
        'src/saga/fixture-layer.ts',
        "import type { Settings } from '../config/settings.js';\nexport type S = Settings;\n",
      )
    ).length,
    1,
  );
  assert.equal(
    (
      await layerErrors(
        'src/systems/nats/fixture-layer.ts',
        "import { Runner } from '../../runner/runner.js';\nexport const r = Runner;\n",
      )
    ).length,
    1,
  );
  assert.equal(
    (
      await layerErrors(
        'src/core/fixture-layer.ts',
        "import { runSaga } from '../saga/engine.js';\nexport const r = runSaga;\n",
      )
    ).length,
    1,
  );
});

test('the same imports from a higher layer are allowed', async () => {
  assert.deepEqual(
    await layerErrors(
      'src/cli/fixture-layer.ts',
      "import { createGateway } from '../gateway/server.js';\nexport const x = createGateway;\n",
    ),
    [],
  );
  assert.deepEqual(
    await layerErrors(
      'src/runner/fixture-layer.ts',
      "import { runSaga } from '../saga/engine.js';\nexport const r = runSaga;\n",
    ),
    [],
  );
  assert.deepEqual(
    await layerErrors(
      'src/states/fixture-layer.ts',
      "import type { Settings } from '../config/settings.js';\nexport type S = Settings;\n",
    ),
    [],
  );
});

/** The rule messages of the cluster port (eslint.config.js PORTS and the dynamic-import rule). */
async function portErrors(file: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: join(root, file) });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'no-restricted-syntax')
    .map((m) => m.message);
}

test('the runner reaches the transports through the cluster port only: no systems/nats, static or dynamic', async () => {
  const nats = await portErrors(
    'src/runner/fixture-layer.ts',
    "import type { NatsHub } from '../systems/nats/hub.js';\nexport type H = NatsHub;\n",
  );
  assert.equal(nats.length, 1);
  assert.match(nats[0]!, /cluster port: runner\/ imports only systems\/system\.ts and systems\/local\.ts/);
  // nested folders too, and the factory that picks a transport
  assert.equal(
    (
      await portErrors(
        'src/runner/orchestrator/fixture-layer.ts',
        "import { OutcomeRecorder } from '../../systems/nats/outcomes.js';\nexport const o = OutcomeRecorder;\n",
      )
    ).length,
    1,
  );
  assert.equal(
    (await portErrors('src/runner/fixture-layer.ts', "export { createCluster } from '../systems/index.js';\n")).length,
    1,
  );
  const dynamic = await portErrors(
    'src/runner/fixture-layer.ts',
    "export const load = () => import('../systems/nats/hub.js');\n",
  );
  assert.equal(dynamic.length, 1);
  assert.match(dynamic[0]!, /runner\/ loads no transport/);
});

test('the port itself, the local system, and nats from a higher layer are allowed', async () => {
  assert.deepEqual(
    await portErrors(
      'src/runner/fixture-layer.ts',
      "import type { Cluster } from '../systems/system.js';\nimport { LocalCluster } from '../systems/local.js';\nexport type C = Cluster;\nexport const L = LocalCluster;\n",
    ),
    [],
  );
  assert.deepEqual(
    await portErrors(
      'src/cli/fixture-layer.ts',
      "import { NatsHub } from '../systems/nats/hub.js';\nexport const load = () => import('../systems/nats/hub.js');\nexport const h = NatsHub;\n",
    ),
    [],
  );
});
