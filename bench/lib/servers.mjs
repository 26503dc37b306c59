// How the suite starts each server under test, each in its own process on a free loopback port.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startService } from './proc.mjs';
import { serverNode } from './runtime.mjs';

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PEERS = join(ROOT, 'bench', 'peers');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');

/**
 * `sagaway start --config FILE --port N` (gateway and runners in one process), logs off, on the
 * servers' Node (bench/lib/runtime.mjs). nodeArgs go before the CLI (e.g. `--cpu-prof`).
 */
export async function sagawayStart(config, { env, nofile, nodeArgs = [] } = {}) {
  const port = await freePort();
  const svc = await startService(
    'sagaway',
    serverNode(),
    [...nodeArgs, CLI, 'start', '--config', join(ROOT, config), '--port', String(port)],
    {
      env,
      nofile,
      probe: `http://127.0.0.1:${port}/healthz`,
    },
  );
  return { ...svc, port, base: `http://127.0.0.1:${port}` };
}

/**
 * A `sagaway gateway` or `sagaway runner` process of a distributed deployment, logs off.
 * nodeArgs go before the CLI (e.g. `--cpu-prof`).
 */
export async function sagawayProcess(args, { env, probe, nodeArgs = [] } = {}) {
  const port = await freePort();
  const svc = await startService(
    `sagaway ${args[0]}`,
    serverNode(),
    [...nodeArgs, CLI, ...args, '--port', String(port)],
    {
      env,
      probe: probe ?? `http://127.0.0.1:${port}/healthz`,
    },
  );
  return { ...svc, port, base: `http://127.0.0.1:${port}` };
}

/**
 * A peer script of bench/peers, told its port by PORT; `probePath` must answer 2xx when ready.
 * nodeArgs go before the script (e.g. `--cpu-prof`).
 */
export async function peerScript(script, probePath, { env = {}, nofile, probe, nodeArgs = [] } = {}) {
  const port = await freePort();
  const svc = await startService(script, serverNode(), [...nodeArgs, join(PEERS, script)], {
    env: { ...env, PORT: String(port) },
    nofile,
    probe: probe ?? `http://127.0.0.1:${port}${probePath}`,
  });
  return { ...svc, port, base: `http://127.0.0.1:${port}` };
}

/** Node-RED 4.1 through its own CLI with bench/peers/node-red/settings.cjs and a flows file. */
export async function nodeRed(flows, probePath) {
  const port = await freePort();
  const userDir = mkdtempSync(join(tmpdir(), 'sagaway-bench-node-red-'));
  const svc = await startService(
    'node-red',
    serverNode(),
    [
      join(PEERS, 'node_modules', 'node-red', 'red.js'),
      '--settings',
      join(PEERS, 'node-red', 'settings.cjs'),
      '--userDir',
      userDir,
      '--port',
      String(port),
      join(PEERS, 'node-red', flows),
    ],
    { probe: `http://127.0.0.1:${port}${probePath}`, timeoutMs: 60_000 },
  );
  return { ...svc, port, base: `http://127.0.0.1:${port}` };
}
