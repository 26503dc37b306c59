#!/usr/bin/env node
// A tiny card-payment service for the order-saga example: the HTTP service the `charge` step calls.
//   node examples/order-saga/payments.mjs [--port 8091]     (PORT also works; 0 = any free port)
// Listens on 127.0.0.1 only; keeps charges in memory. Prints `listening http://127.0.0.1:<port>`
// when ready, then one access line per request (`POST /v1/charges 201`).
//   POST /v1/charges { card, amount }   -> 201 { chargeId, amount, status: "captured" }
//                                          402 when card is "4000-0000-0000-0002" (always declined)
//   POST /v1/refunds { chargeId }        -> 200 { chargeId, status: "refunded" } | 404
//   GET  /v1/charges/:id                 -> the charge | 404
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string' } } });
const port = Number(values.port ?? process.env.PORT ?? 8091);
const DECLINED = '4000-0000-0000-0002';
const MAX_BODY = 16 * 1024;
const charges = new Map();

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
  const url = new URL(req.url ?? '/', 'http://payments');
  if (req.method === 'POST' && url.pathname === '/v1/charges') {
    return readJson(req, (body) => {
      const { card, amount } = body ?? {};
      if (typeof card !== 'string' || typeof amount !== 'number' || !(amount > 0))
        return send(res, 400, { error: 'expected { card, amount }' });
      if (card === DECLINED) return send(res, 402, { error: 'card declined' });
      const chargeId = `ch_${charges.size + 1}`;
      const charge = { chargeId, amount, status: 'captured' };
      charges.set(chargeId, charge);
      send(res, 201, charge);
    });
  }
  if (req.method === 'POST' && url.pathname === '/v1/refunds') {
    return readJson(req, (body) => {
      const charge = charges.get(body?.chargeId);
      if (!charge) return send(res, 404, { error: 'no such charge' });
      charge.status = 'refunded'; // refunding twice changes nothing
      send(res, 200, { chargeId: charge.chargeId, status: charge.status });
    });
  }
  const one = /^\/v1\/charges\/(ch_\d+)$/.exec(url.pathname);
  if (req.method === 'GET' && one) {
    const charge = charges.get(one[1]);
    return charge ? send(res, 200, charge) : send(res, 404, { error: 'no such charge' });
  }
  send(res, 404, { error: 'not found' });
});

server.listen(port, '127.0.0.1', () => {
  console.log(`listening http://127.0.0.1:${server.address().port}`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => server.close(() => process.exit(0)));
