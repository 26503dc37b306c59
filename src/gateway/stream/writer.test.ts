import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { entryData, formatComment, formatEvent } from './writer.js';

function parse(text: string, chunk = 0): { events: EventSourceMessage[]; comments: string[] } {
  const events: EventSourceMessage[] = [];
  const comments: string[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e), onComment: (c) => comments.push(c) });
  if (chunk <= 0) parser.feed(text);
  else for (let i = 0; i < text.length; i += chunk) parser.feed(text.slice(i, i + chunk));
  return { events, comments };
}

const nasty = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.constantFrom(
    '\r',
    '\n',
    '\r\n',
    '\0',
    '\u2028',
    '\u2029',
    '😀',
    'data: x\n\nid: 1',
    '\n\nevent: end\ndata: {}\n\n',
    ' lead',
  ),
  fc
    .array(fc.constantFrom('a', '\r', '\n', '\r\n', '\0', '\u2028', '😀', ':', ' ', 'data:', 'id:'), { maxLength: 60 })
    .map((a) => a.join('')),
  fc.string({ minLength: 10_000, maxLength: 70_000 }),
);

test('property: any list entries come back through eventsource-parser as the same data, one event each', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.oneof(
          nasty,
          fc.record({ text: nasty, n: fc.integer() }).map((r) => ({ ...r })),
          fc.array(nasty, { maxLength: 3 }),
        ),
        { maxLength: 8 },
      ),
      fc.nat(50),
      (entries, chunk) => {
        const wire = entries.map((e, i) => formatEvent({ id: `tok${i}`, data: entryData(e) })).join('');
        const { events } = parse(wire, chunk);
        assert.equal(events.length, entries.length);
        events.forEach((ev, i) => {
          assert.equal(ev.event, undefined);
          assert.equal(ev.id, `tok${i}`);
          assert.equal(ev.data, entryData(entries[i]));
          assert.deepEqual(JSON.parse(ev.data), entries[i]);
        });
      },
    ),
    { numRuns: 300 },
  );
});

test('property: raw text data never starts a new event or field; line breaks come back as LF', () => {
  fc.assert(
    fc.property(nasty, fc.string({ unit: 'binary', maxLength: 20 }), (data, id) => {
      const wire = formatEvent({ id, event: 'message', data }) + formatComment(data);
      const { events } = parse(wire);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.data, data.replace(/\r\n|\r/g, '\n'));
      assert.equal(events[0]!.event, 'message');
      assert.equal(events[0]!.id, id.replace(/[\r\n\0]/g, '') === '' ? '' : id.replace(/[\r\n\0]/g, ''));
    }),
    { numRuns: 300 },
  );
});

test('the wire format of an entry, an end event and a ping', () => {
  assert.equal(formatEvent({ id: 'T', data: entryData({ a: 'x\ny' }) }), 'id: T\ndata: {"a":"x\\ny"}\n\n');
  assert.equal(
    formatEvent({ event: 'end', id: 'E', data: '{"reason":"complete"}' }),
    'event: end\nid: E\ndata: {"reason":"complete"}\n\n',
  );
  assert.equal(formatComment('ping'), ': ping\n\n');
  assert.equal(formatEvent({ event: 'error', retry: 5000, data: '{}' }), 'event: error\nretry: 5000\ndata: {}\n\n');
  assert.equal(entryData(undefined), 'null');
});
