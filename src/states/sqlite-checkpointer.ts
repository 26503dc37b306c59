import { Worker } from 'node:worker_threads';
import type { Logger } from '../core/logger.js';
import type { SqlDatabase } from './sqlite-driver.js';

/**
 * WAL checkpoints of a SQLite file state, on a thread of their own. SQLite copies the WAL back
 * into the database file (and syncs it) from inside the commit that passes `wal_autocheckpoint`
 * pages; with 1 MB records that was every fourth write, and it held the event loop for up to
 * 135 ms each time (half the loop time of a write: bench/load's profile). Here a thread with
 * its own connection checkpoints every CHECKPOINT_EVERY_MS, and the state's own connection keeps
 * a far higher `wal_autocheckpoint` (BACKSTOP_PAGES) only as a backstop, so the WAL stays bounded
 * if the thread falls behind or fails. Without the thread (it cannot start), SQLite's default
 * applies as before.
 */

/** How often the thread checkpoints. */
export const CHECKPOINT_EVERY_MS = 500;
/** `wal_autocheckpoint` of the state's connection while the thread runs: 40 MB of 4 KB pages. */
export const BACKSTOP_PAGES = 10_000;

/**
 * How long after the state opens its thread starts: starting a thread (a Node environment and
 * the SQLite addon, ≈ 100 ms of CPU) is not what a gateway should do before it answers its
 * first request (`sagaway start`, issue 23); until then SQLite's own threshold applies, as when
 * the thread cannot start.
 */
export const CHECKPOINT_START_DELAY_MS = 1000;

/**
 * A checkpoint thread started `delayMs` from now (startCheckpointer), stopped at once if the
 * state closes before: never throws, never holds the process open.
 */
export function startCheckpointerLater(
  file: string,
  db: SqlDatabase,
  log?: Logger,
  delayMs = CHECKPOINT_START_DELAY_MS,
): Checkpointer {
  let started: Promise<Checkpointer | undefined> | undefined;
  const timer = setTimeout(() => {
    started = startCheckpointer(file, db, log);
  }, delayMs);
  timer.unref();
  return {
    async stop() {
      clearTimeout(timer);
      await (await started)?.stop();
    },
  };
}

/** A running checkpoint thread. */
export interface Checkpointer {
  stop(): Promise<void>;
}

/**
 * Start checkpointing `file` on a thread, and raise `db`'s own threshold to the backstop once
 * the thread is ready. Never throws: a thread that cannot start leaves SQLite's default in place.
 */
export async function startCheckpointer(
  file: string,
  db: SqlDatabase,
  log?: Logger,
): Promise<Checkpointer | undefined> {
  let worker: Worker;
  try {
    worker = new Worker(new URL('./sqlite-checkpoint-worker.js', import.meta.url), {
      workerData: { file, everyMs: CHECKPOINT_EVERY_MS },
    });
    await new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the checkpoint thread exited (${code})`)));
    });
  } catch (err) {
    log?.warn({ err: (err as Error).message }, 'SQLite checkpoints stay in the writing thread');
    return undefined;
  }
  worker.unref();
  db.exec(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  worker.on('error', (err) => {
    // back to SQLite's default: the writes checkpoint themselves again
    log?.warn({ err: err.message }, 'the SQLite checkpoint thread failed');
    try {
      db.exec('PRAGMA wal_autocheckpoint = 1000');
    } catch {
      // the database was closed meanwhile
    }
  });
  return {
    async stop() {
      const gone = new Promise((r) => worker.once('exit', r));
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), 2000);
      await gone;
      clearTimeout(timer);
    },
  };
}
