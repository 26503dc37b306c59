import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { silentLogger } from '../../src/core/logger.js';
import { createState } from '../../src/states/index.js';
import { PostgresState } from '../../src/states/postgres.js';
import { findPgBin, startOwnPostgres, type OwnPostgres } from './own-postgres.js';
import { skipOrFail } from './pg-available.js';

/**
 * The PostgreSQL state keeps working across a server restart: while the server is down its
 * operations fail with STATE_UNAVAILABLE (no crash, no unhandled 'error' event), and the same
 * instance works again once the server is back. Runs its own server on a free port.
 */

const bin = findPgBin();
let server: OwnPostgres | undefined;
let startError: string | undefined;
if (bin) {
  try {
    server = await startOwnPostgres(bin);
  } catch (err) {
    startError = `could not start a private PostgreSQL: ${(err as Error).message.split('\n')[0]}`;
  }
}
after(async () => server?.destroy());

const reason = !bin ? 'initdb/pg_ctl not found under /usr/lib/postgresql/*/bin' : startError;

test(
  'postgres state survives a server restart',
  { skip: reason === undefined ? false : skipOrFail(reason), timeout: 60_000 },
  async () => {
    const srv = server as OwnPostgres;
    const unhandled: unknown[] = [];
    const onUncaught = (err: unknown): void => {
      unhandled.push(err);
    };
    process.on('uncaughtException', onUncaught);
    process.on('unhandledRejection', onUncaught);
    const s = new PostgresState({
      alias: 'restart',
      url: srv.url,
      table: 'restart',
      poolSize: 3,
      connectTimeoutMs: 2000,
    });
    try {
      await s.init();
      await s.create('a', { n: 1 });
      // fill the pool with idle connections, which the server kills when it stops
      await Promise.all([s.get('a'), s.get('a'), s.list(), s.ping()]);

      await srv.stop();
      for (const op of [() => s.get('a'), () => s.update('a', { n: 2 }), () => s.list(), () => s.ping()]) {
        await assert.rejects(op(), { code: 'STATE_UNAVAILABLE', http: 503 });
      }
      // a write in a transaction during the outage fails cleanly too
      await assert.rejects(s.create('b', {}, { idempotencyKey: 'k' }), { code: 'STATE_UNAVAILABLE' });

      // a state configured while the server is down: init fails, first use after the restart works
      const late = createState(
        { type: 'postgres', alias: 'late', url: srv.url, table: 'late', poolSize: 2, queries: {} },
        silentLogger(),
      );
      await assert.rejects(late.init(), { code: 'STATE_UNAVAILABLE' });
      await assert.rejects(late.get('x'), { code: 'STATE_UNAVAILABLE' });

      await srv.start();
      await s.ping();
      assert.equal((await late.create('x', { ok: true })).version, 1);
      assert.deepEqual((await late.get('x'))?.data, { ok: true });
      await late.close();
      assert.deepEqual(await s.get('a'), { id: 'a', version: 1, data: { n: 1 } });
      const b = await s.create('b', { n: 2 }, { idempotencyKey: 'k' });
      assert.equal(b.version, 1);
      assert.equal((await s.update('a', { n: 3 })).version, 2);
      // the server crashes in the middle of a burst of writes, some of them inside transactions
      let stop = false;
      const outcomes: string[] = [];
      const writer = async (w: number): Promise<void> => {
        for (let i = 0; !stop; i++) {
          try {
            await s.update('a', { [`w${w}`]: i }, { idempotencyKey: `burst:${w}:${i}` });
            outcomes.push('ok');
          } catch (err) {
            outcomes.push((err as { code?: string }).code ?? 'UNCODED');
            await new Promise((r) => setTimeout(r, 20));
          }
        }
      };
      const writers = Array.from({ length: 6 }, (_, w) => writer(w));
      const until = async (cond: () => boolean) => {
        for (const end = Date.now() + 20_000; !cond() && Date.now() < end;) await new Promise((r) => setTimeout(r, 5));
      };
      await until(() => outcomes.includes('ok')); // writes go through
      await srv.stop('immediate');
      const stoppedAt = outcomes.length;
      await until(() => outcomes.slice(stoppedAt).filter((o) => o !== 'ok').length >= 6); // and then fail
      stop = true;
      await Promise.all(writers);
      assert.ok(outcomes.includes('ok'), 'writes went through before the crash');
      assert.deepEqual([...new Set(outcomes.filter((o) => o !== 'ok'))], ['STATE_UNAVAILABLE']);
      await srv.start();
      const afterCrash = await s.update('a', { crash: 'survived' });
      assert.equal(afterCrash.data['crash'], 'survived');

      // let any late 'error' event surface before checking
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('uncaughtException', onUncaught);
      process.off('unhandledRejection', onUncaught);
      await s.close();
    }
  },
);
