#!/usr/bin/env node
// A tiny exchange-rate service for the rest example: the "other HTTP service" a saga calls.
//   node examples/rest/upstream.mjs [--port 8090]      (PORT also works; 0 = any free port)
// Listens on 127.0.0.1 only. Every request needs `Authorization: Bearer <UPSTREAM_TOKEN>`
// (default token: demo-token). Prints one line `listening http://127.0.0.1:<port>` when ready,
// then one access line per request (`GET /v1/rates/USD 200`; never a header value).
//   GET  /v1/rates/:currency           -> { base: "EUR", currency, rate } | 404
//   POST /v1/convert { from, to, amount } -> { from, to, amount, result } | 400 | 404
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string' } } });
const port = Number(values.port ?? process.env.PORT ?? 8090);
const token = process.env.UPSTREAM_TOKEN ?? 'demo-token';
const MAX_BODY = 64 * 1024;

// Units of each currency for one euro (a fixed table: this is a demo).
const RATES = new Map([
  ['EUR', 1],
  ['USD', 1.08],
  ['GBP', 0.85],
  ['CHF', 0.95],
  ['JPY', 162.3],
]);

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function readJson(req, done) {
  let size = 0;
  const chunks = [];
  req.on('data', (c) => {
    size += c.length;
    if (size > MAX_BODY) req.destroy();
    else chunks.push(c);
  });
  req.on('end', () => {
    try {
      done(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      done(undefined);
    }
  });
}

const server = createServer((req, res) => {
  res.on('finish', () => console.log(`${req.method} ${req.url} ${res.statusCode}`));
  if (req.headers.authorization !== `Bearer ${token}`) return send(res, 401, { error: 'unauthorized' });
  const url = new URL(req.url ?? '/', 'http://upstream');
  const rate = /^\/v1\/rates\/([A-Za-z]{3})$/.exec(url.pathname);
  if (req.method === 'GET' && rate) {
    const currency = rate[1].toUpperCase();
    if (!RATES.has(currency)) return send(res, 404, { error: `no rate for ${currency}` });
    return send(res, 200, { base: 'EUR', currency, rate: RATES.get(currency) });
  }
  if (req.method === 'POST' && url.pathname === '/v1/convert') {
    return readJson(req, (body) => {
      const { from, to, amount } = body ?? {};
      if (typeof from !== 'string' || typeof to !== 'string' || typeof amount !== 'number' || !(amount >= 0))
        return send(res, 400, { error: 'expected { from, to, amount }' });
      const a = RATES.get(from.toUpperCase());
      const b = RATES.get(to.toUpperCase());
      if (a === undefined || b === undefined) return send(res, 404, { error: 'unknown currency' });
      const result = Math.round((amount / a) * b * 100) / 100;
      send(res, 200, { from: from.toUpperCase(), to: to.toUpperCase(), amount, result });
    });
  }
  send(res, 404, { error: 'not found' });
});

server.listen(port, '127.0.0.1', () => {
  console.log(`listening http://127.0.0.1:${server.address().port}`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => server.close(() => process.exit(0)));
