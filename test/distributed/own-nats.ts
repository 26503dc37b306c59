import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, reachable, waitUntil } from './harness.js';

/**
 * A test's own nats-server (JetStream on, a free port, a temporary store), started from a
 * configuration file: the permissioned one of examples/distributed by default, so that the
 * distributed tests run with the credentials and permissions the example ships.
 */

/** The nats-server binary of this machine. */
export const NATS_SERVER = process.env['SAGAWAY_NATS_SERVER'] ?? '/usr/sbin/nats-server';

/** The example's server configuration (users gateway, runner, admin; subjects of prefix `shop`). */
export const EXAMPLE_CONF = join('examples', 'distributed', 'nats-server.conf');

/** The credentials of each role of EXAMPLE_CONF, as the processes' environment (NATS_USER, NATS_PASS). */
export type Role = 'gateway' | 'runner' | 'admin';

/** One started server. */
export interface OwnNats {
  url: string;
  port: number;
  /** the environment a process of `role` connects with (sagaway.yaml reads NATS_USER and NATS_PASS) */
  env(role: Role): Record<string, string>;
  /** user and password of `role` */
  credentials(role: Role): { user: string; pass: string };
  /** what the server logged (permission violations among it) */
  log(): string;
  stop(): Promise<void>;
}

/** Whether a test can start its own server. */
export function ownNatsAvailable(): boolean {
  return existsSync(NATS_SERVER);
}

/**
 * Start nats-server with `conf` (its text, or EXAMPLE_CONF) where every `shop.`-style subject is
 * written for `prefix` (default `shop`, as in the file): a test with another prefix gets the same
 * permissions for its own subjects.
 */
export async function startOwnNats(options: { conf?: string; prefix?: string } = {}): Promise<OwnNats> {
  const dir = await mkdtemp(join(tmpdir(), 'sagaway-nats-'));
  let text = options.conf ?? (await readFile(EXAMPLE_CONF, 'utf8'));
  const prefix = options.prefix ?? 'shop';
  // `shop` as the prefix (not as the runner in a bucket's name, `shop_status_shop`)
  if (prefix !== 'shop') text = text.replace(/(?<!_status_)(?<=["\s.]|KV_)shop(?=[._])/g, prefix);
  const file = join(dir, 'nats-server.conf');
  await writeFile(file, text);
  const port = await freePort();
  const passwords: Record<Role, string> = { gateway: 'gw-pass-t', runner: 'rn-pass-t', admin: 'ad-pass-t' };
  let logText = '';
  const child: ChildProcess = spawn(NATS_SERVER, ['-c', file, '-a', '127.0.0.1', '-p', String(port), '-sd', dir], {
    env: {
      ...process.env,
      NATS_GATEWAY_PASS: passwords.gateway,
      NATS_RUNNER_PASS: passwords.runner,
      NATS_ADMIN_PASS: passwords.admin,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk: Buffer) => {
    logText += chunk.toString('utf8');
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    await waitUntil(async () => exited || (await reachable(port)), 10_000, 50);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  if (exited) throw new Error(`nats-server did not start: ${logText.slice(-500)}`);
  const url = `nats://127.0.0.1:${port}`;
  return {
    url,
    port,
    credentials: (role) => ({ user: role, pass: passwords[role] }),
    env: (role) => ({ NATS_URL: url, NATS_USER: role, NATS_PASS: passwords[role] }),
    log: () => logText,
    stop: async () => {
      if (!exited) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await gone;
        clearTimeout(t);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
