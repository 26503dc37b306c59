import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from './sqlite-driver.js';

/**
 * The thread of sqlite-checkpointer.ts: its own connection to the database file, checkpointing
 * the WAL (PASSIVE: it never waits for, nor blocks, the writers and readers of the state) every
 * `everyMs`, until told to stop.
 */
const { file, everyMs } = workerData as { file: string; everyMs: number };
const db = await openSqlite(file);
db.exec('PRAGMA busy_timeout = 5000');
const timer = setInterval(() => {
  try {
    db.exec('PRAGMA wal_checkpoint(PASSIVE)');
  } catch {
    // busy or gone: the next round tries again, and the state's backstop checkpoints in any case
  }
}, everyMs);
parentPort!.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
parentPort!.postMessage('ready');
