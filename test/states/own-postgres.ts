import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * A throw-away PostgreSQL server for tests that stop and start it: its own data folder, socket
 * folder and free port on 127.0.0.1, so the shared server is never touched. initdb refuses to run
 * as root, so as root the server runs as the `postgres` user (through runuser).
 */

const run = promisify(execFile);

/** The folder of initdb/pg_ctl, or undefined when PostgreSQL's server binaries are absent. */
export function findPgBin(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const bin = join(base, v, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
  }
  return undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** A running private server. */
export interface OwnPostgres {
  url: string;
  port: number;
  /** `fast` (default) disconnects clients cleanly; `immediate` is a crash (recovery at next start) */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** stop and delete everything */
  destroy(): Promise<void>;
}

/** initdb + start a server on a free port. */
export async function startOwnPostgres(bin: string): Promise<OwnPostgres> {
  const asRoot = process.getuid?.() === 0;
  const dir = await mkdtemp(join(tmpdir(), 'sagaway-pg-'));
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const exec = async (cmd: string, args: string[]): Promise<void> => {
    const full = join(bin, cmd);
    if (asRoot) await run('runuser', ['-u', 'postgres', '--', full, ...args], { timeout: 30_000 });
    else await run(full, args, { timeout: 30_000 });
  };
  const data = join(dir, 'data');
  const port = await freePort();
  await exec('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = (): Promise<void> => exec('pg_ctl', ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-w', 'start']);
  const stop = (mode: 'fast' | 'immediate' = 'fast'): Promise<void> =>
    exec('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
  await start();
  let running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async stop(mode) {
      await stop(mode);
      running = false;
    },
    async start() {
      await start();
      running = true;
    },
    async destroy() {
      if (running) await stop().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
