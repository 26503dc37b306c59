import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import type { Logger } from '../../core/logger.js';
import { coalesceSwitchedOff, coalesceWrites, WRITTEN_FOR } from './coalesce.js';

/** The guard of the write-coalescing patch: applied to exactly the nats.js it copies, loud otherwise. */

function recording(): { log: Logger; lines: { level: number; msg: string; reason?: string }[] } {
  const lines: { level: number; msg: string; reason?: string }[] = [];
  const log = pino(
    { level: 'debug' },
    { write: (line: string) => void lines.push(JSON.parse(line)) },
  ) as unknown as Logger;
  return { log, lines };
}

/** A protocol object shaped as nats.js 3.3.1's, of client version `version`. */
function protocol(version: unknown) {
  const sent: string[] = [];
  return {
    sent,
    conn: {
      protocol: {
        transport: { version },
        pendingLimit: 1024,
        outbound: { length: () => 0, size: () => 0, fill: () => undefined },
        flushPending: () => undefined,
        sendCommand: (cmd: string) => void sent.push(cmd),
      },
    },
  };
}

test('the client it was written for is patched, silently', () => {
  const { log, lines } = recording();
  const { conn } = protocol(WRITTEN_FOR);
  const original = conn.protocol.sendCommand;
  const before = coalesceSwitchedOff();
  assert.equal(coalesceWrites(conn as unknown as NatsConnection, log), true);
  assert.notEqual(conn.protocol.sendCommand, original, 'sendCommand replaced');
  assert.equal(coalesceSwitchedOff(), before);
  assert.deepEqual(lines, []);
});

test('another nats.js version: left alone, with a warn and the count raised', () => {
  const { log, lines } = recording();
  const { conn } = protocol('3.4.0');
  const original = conn.protocol.sendCommand;
  const before = coalesceSwitchedOff();
  assert.equal(coalesceWrites(conn as unknown as NatsConnection, log), false);
  assert.equal(conn.protocol.sendCommand, original, 'not patched');
  assert.equal(coalesceSwitchedOff(), before + 1);
  assert.equal(lines.length, 1);
  assert.equal(lines[0]!.level, 40, 'warn');
  assert.match(
    lines[0]!.reason!,
    new RegExp(`nats\\.js 3\\.4\\.0 \\(written for ${WRITTEN_FOR.replaceAll('.', '\\.')}\\)`),
  );
});

test('the right version with another shape, or no protocol object: left alone, warned and counted', () => {
  const { log, lines } = recording();
  const before = coalesceSwitchedOff();
  const { conn } = protocol(WRITTEN_FOR);
  const { pendingLimit: _dropped, ...reshaped } = conn.protocol;
  assert.equal(coalesceWrites({ protocol: reshaped } as unknown as NatsConnection, log), false);
  assert.equal(coalesceWrites({} as NatsConnection, log), false);
  assert.equal(coalesceSwitchedOff(), before + 2);
  assert.deepEqual(
    lines.map((l) => [l.level, l.reason]),
    [
      [40, 'the protocol object has another shape'],
      [40, 'no protocol object'],
    ],
  );
});
