import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import type { SecretSource } from '../../src/runner/executor/secrets.js';

/**
 * A secret canary for the inject tests: a secret value that must never leave the runner, in any
 * form a careless or hostile path could give it (plain, reversed, base64, hex, split in halves,
 * JSON-escaped). Scrubbing the exact value is not the defence; never resolving caller data is.
 */

/** The canary secret (32 characters, so that each half is long enough to be telling). */
export const CANARY = 'Cnry7f9a2bQ4xZ81LmW0pTe6vK3sY5dH';

/** A configured value that callers must not be able to read either. */
export const REGION = 'eu-value-6b1d9e0c4f27a8';

/** The forms of the canary that must never appear. */
export function canaryForms(secret: string = CANARY): string[] {
  const half = Math.floor(secret.length / 2);
  return [
    secret,
    [...secret].reverse().join(''),
    Buffer.from(secret).toString('base64'),
    Buffer.from(secret).toString('base64url'),
    Buffer.from(secret).toString('hex'),
    secret.slice(0, half),
    secret.slice(half),
    secret.slice(0, 12),
    secret.slice(-12),
  ];
}

/** Assert that `text` holds no form of the canary nor of the configured value. */
export function assertNoLeak(text: string, where: string): void {
  for (const form of [...canaryForms(CANARY), ...canaryForms(REGION)]) {
    assert.ok(!text.includes(form), `${where} leaked a form of a secret (${form.slice(0, 4)}...)`);
  }
}

/** Secrets of the tests: CANARY (which callers try to read) and API_TOKEN (which configured records use). */
export const API_TOKEN = 'tok-00aa11bb22cc33dd44ee';
export const secrets: SecretSource = {
  get: (name) => (name === 'CANARY' ? CANARY : name === 'API_TOKEN' ? API_TOKEN : undefined),
};

/** A debug-level logger whose lines are kept, to search them. */
export function capturingLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { log: pino({ level: 'debug' }, sink), lines };
}

/** Caller texts that look like every kind of placeholder. */
export const HOSTILE_TEXTS: readonly string[] = [
  '#{{CANARY}}',
  '${{REGION}}',
  '%%@.user%%',
  '%%@.request.id%%',
  '%%$.other%%',
  '%%other%%',
  '%%param_other%%',
  '%%param_note%%',
  '%%param_missing%%',
  'a #{{CANARY}} b ${{REGION}} c %%other%% d %%param_other|x%%',
  '#{{API_TOKEN}}',
];
