import { readFile, stat } from 'node:fs/promises';
import { SagawayError } from '../core/errors.js';
import { isObject } from '../core/path.js';
import type { State } from './state.js';

/**
 * Seeding: a state's `seed` file (JSON `[{ "id": ..., "data": {...} }]`) is loaded when the
 * state is empty, e.g. the predefined action records of the `actions` state. A state that
 * already holds records is left alone, so edits made at run time survive a restart.
 */

/** Largest seed file read. */
export const MAX_SEED_BYTES = 16 * 1024 * 1024;

/** Load `file` into `state` if the state is empty; returns how many records were created. */
export async function seedState(state: State, file: string): Promise<number> {
  const page = await state.list({ limit: 1 });
  if (page.list.length > 0) return 0;
  const records = await readSeed(state.alias, file);
  for (const r of records) {
    // the key makes a seed that was interrupted half-way resumable without RECORD_EXISTS
    await state.upsert(r.id, r.data, { idempotencyKey: `seed:${state.alias}:${r.id}` });
  }
  return records.length;
}

async function readSeed(alias: string, file: string): Promise<{ id: string; data: Record<string, unknown> }[]> {
  const bad = (why: string, cause?: unknown): SagawayError =>
    new SagawayError('CONFIG_INVALID', `seed file of state "${alias}": ${why}`, cause === undefined ? {} : { cause });
  let text: string;
  try {
    if ((await stat(file)).size > MAX_SEED_BYTES) throw bad(`larger than ${MAX_SEED_BYTES} bytes`);
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (err instanceof SagawayError) throw err;
    throw bad('cannot be read', err);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw bad('is not valid JSON', err);
  }
  if (!Array.isArray(parsed)) throw bad('must be a JSON array of { id, data }');
  return parsed.map((entry, i) => {
    if (!isObject(entry) || typeof entry['id'] !== 'string' || entry['id'] === '' || !isObject(entry['data'])) {
      throw bad(`entry [${i}] must be { "id": string, "data": object }`);
    }
    return { id: entry['id'], data: entry['data'] };
  });
}
