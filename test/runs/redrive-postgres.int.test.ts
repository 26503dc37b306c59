import { test } from 'node:test';
import pg from 'pg';
import { pgUnavailableReason, skipOrFail } from '../states/pg-available.js';
import { redriveFromTheFailedStep } from './redrive-flow.js';
import { config } from './runs-world.js';

/** Redrive on the real PostgreSQL (issue 22): the same flow as on SQLite, journal in PostgreSQL. */

const URL = process.env['SAGAWAY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const reason = await pgUnavailableReason(URL);

test(
  'redrive from the failed step after fixing the cause: only the rest runs, same run id (PostgreSQL)',
  { skip: reason ? skipOrFail(reason) : false },
  async (t) => {
    const table = `redrive_${process.pid}_${Date.now().toString(36)}`;
    t.after(async () => {
      const c = new pg.Client({ connectionString: URL });
      await c.connect();
      await c.query(`drop table if exists "${table}", "${table}_idem"`);
      await c.end();
    });
    await redriveFromTheFailedStep(config(`jr: { type: postgres, url: "${URL}", table: ${table} }`));
  },
);
