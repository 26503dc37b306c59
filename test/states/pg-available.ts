import pg from 'pg';

/**
 * Whether a PostgreSQL server answers at `url`. Integration tests skip with the reason when it
 * does not, and fail instead when SAGAWAY_REQUIRE_SERVICES=1.
 */
export async function pgUnavailableReason(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (err) {
    return `PostgreSQL not reachable at ${url.replace(/\/\/[^@]*@/, '//')}: ${(err as Error).message}`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export { skipOrFail } from '../require-services.js';
