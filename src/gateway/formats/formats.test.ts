import { test } from 'node:test';
import assert from 'node:assert/strict';
import { csvCell, toCsv } from './csv.js';
import { toHtml } from './html.js';
import { formatForAccept, negotiate, render, TOO_LARGE } from './index.js';
import { overBudget } from './budget.js';
import { toXml, xmlName } from './xml.js';

test('negotiation: extension wins, then Accept by q and our order, JSON by default, null when impossible', () => {
  assert.equal(negotiate('csv', 'application/xml'), 'csv');
  assert.equal(formatForAccept(undefined), 'json');
  assert.equal(formatForAccept('*/*'), 'json');
  assert.equal(formatForAccept('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'), 'html');
  assert.equal(formatForAccept('application/xml;q=0.5, text/csv'), 'csv');
  assert.equal(formatForAccept('text/*'), 'html');
  assert.equal(formatForAccept('TEXT/PLAIN'), 'text');
  assert.equal(formatForAccept('image/png'), null);
  assert.equal(formatForAccept('application/json;q=0'), null);
});

test('CSV: RFC 4180 quoting, union of columns in first-seen order, nested JSON, formula cells neutralised', () => {
  const csv = toCsv({
    list: [
      { a: 'plain', b: 'x,y' },
      { b: 'say "hi"', c: { d: [1] }, a: '=HYPERLINK("http://evil")' },
      { a: '+1', c: '-2', b: '@SUM(A1)' },
      { a: 'line\nbreak', b: -3, c: null },
      'scalar',
    ],
  });
  assert.equal(
    csv,
    [
      'a,b,c,value',
      'plain,"x,y",,',
      `"'=HYPERLINK(""http://evil"")","say ""hi""","{""d"":[1]}",`,
      "'+1,'@SUM(A1),'-2,",
      '"line\nbreak",-3,,',
      ',,,scalar',
      '',
    ].join('\r\n'),
  );
  assert.equal(csvCell('\tcmd'), "'\tcmd");
  assert.equal(toCsv({ nolist: 1 }), undefined);
  assert.equal(render('csv', { a: 1 }), undefined);
});

test('HTML: data is escaped in tables and definition lists; the saga page is sent as written', () => {
  const evil = '<script>alert(1)</script>"\'&';
  const table = toHtml({ list: [{ [evil]: evil }] });
  assert.equal(table.own, false);
  const tableBody = String(table.body);
  assert.ok(!tableBody.includes('<script>'));
  assert.ok(tableBody.includes('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;'));
  const dl = String(toHtml({ name: evil, nested: { x: evil } }).body);
  assert.ok(!dl.includes('<script>'));
  assert.match(dl, /<dl><dt>name<\/dt><dd>&lt;script&gt;/);
  assert.deepEqual(toHtml({ html: '<h1>Mine</h1>' }), { body: '<h1>Mine</h1>', own: true });
  const generated = render('html', { a: 1 });
  assert.ok(generated !== TOO_LARGE && generated !== undefined);
  assert.match(generated.headers!['content-security-policy']!, /default-src 'none'/);
});

test('XML: root element, items, sanitised names, escaped text, forbidden characters replaced', () => {
  assert.equal(
    toXml({ 'a b': 1, '1x': [true, null], xmlns: '<&>', ok: { 'é-ü': 'x\u0001y' } }),
    '<?xml version="1.0" encoding="UTF-8"?><root><a_b>1</a_b><_1x><item>true</item><item/></_1x><_xmlns>&lt;&amp;&gt;</_xmlns><ok><_-_>x\uFFFDy</_-_></ok></root>',
  );
  assert.equal(xmlName(''), '_');
  assert.equal(xmlName('<script>'), '_script_');
});

test('text: the plain field, else not acceptable', () => {
  assert.deepEqual(render('text', { plain: 'hello' }), { contentType: 'text/plain; charset=utf-8', body: 'hello' });
  assert.equal(render('text', { other: 'x' }), undefined);
});

test('budget: every format stops at maxBytes, counted in UTF-8 bytes; a body at the budget passes', () => {
  const list = Array.from({ length: 200 }, (_, i) => ({ n: i, text: 'x'.repeat(100) }));
  for (const format of ['json', 'xml', 'html', 'csv'] as const) {
    const full = render(format, { list });
    assert.ok(full !== undefined && full !== TOO_LARGE);
    const size = Buffer.byteLength(full.body);
    assert.equal(render(format, { list }, size - 1), TOO_LARGE, format);
    assert.deepEqual(render(format, { list }, size), full, format);
  }
  assert.equal(render('text', { plain: 'é'.repeat(10) }, 19), TOO_LARGE);
  assert.ok(render('text', { plain: 'é'.repeat(10) }, 20) !== TOO_LARGE);
  assert.equal(render('html', { html: '<p>' + 'a'.repeat(100) + '</p>' }, 50), TOO_LARGE);
  assert.equal(overBudget('€', 2), true);
  assert.equal(overBudget('€', 3), false);
});
