// Keyed load of the fault suite: new orders at a fixed rate, each with a unique Idempotency-Key,
// sent to the two gateways in turn; a request that fails is sent again with the same key and
// body to the other gateway, until it has a final answer (below) or its retry budget is spent.
/* global fetch, AbortSignal */
import { randomUUID } from 'node:crypto';
import { sleep } from './cluster.mjs';

/** An answer that ends a request's retries: a success, or an error the gateway stored and replays. */
function final(status, replayed) {
  if (status >= 200 && status < 300) return true;
  if (replayed) return true;
  // refusals that a retry cannot change
  return status >= 400 && status < 500 && status !== 409 && status !== 429 && status !== 408;
}

/**
 * Run the load for `seconds` at `rate` new orders per second. Resolves when every order has its
 * final answer or gave up (retries stop `drainMs` after the load ends). Each order:
 * { key, tries: [{ at, gateway, status, code, runId, replayed }], final?: {...}, doneAt }.
 */
export async function keyedLoad({ gateways, rate, seconds, drainMs, t0, attemptTimeoutMs = 20_000 }) {
  const orders = [];
  const stopRetriesAt = t0 + seconds * 1000 + drainMs;
  const one = async (i) => {
    const key = randomUUID();
    const order = { key, tries: [] };
    orders.push(order);
    const body = JSON.stringify({ order: key });
    for (let attempt = 0; ; attempt++) {
      const gateway = gateways[(i + attempt) % gateways.length];
      const at = Date.now() - t0;
      let status = 0;
      let code = 'NETWORK';
      let runId;
      let replayed = false;
      try {
        const res = await fetch(`${gateway}/api/request/order`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body,
          signal: AbortSignal.timeout(attemptTimeoutMs),
        });
        status = res.status;
        runId = res.headers.get('x-request-id') ?? undefined;
        replayed = res.headers.get('idempotent-replayed') === 'true';
        const text = await res.text();
        code = String(status);
        if (status >= 400) {
          try {
            code = JSON.parse(text).code ?? code;
          } catch {
            /* not JSON */
          }
        }
      } catch (err) {
        code = err?.name === 'TimeoutError' ? 'CLIENT_TIMEOUT' : 'NETWORK';
      }
      const t = { at, end: Date.now() - t0, gateway, status, code, runId, replayed };
      order.tries.push(t);
      if (status !== 0 && final(status, replayed)) {
        order.final = t;
        return;
      }
      if (Date.now() + 300 > stopRetriesAt) return;
      await sleep(Math.min(2000, 250 * 2 ** Math.min(attempt, 3)));
    }
  };
  const running = [];
  const interval = 1000 / rate;
  const total = Math.round(rate * seconds);
  for (let i = 0; i < total; i++) {
    const due = t0 + i * interval;
    const wait = due - Date.now();
    if (wait > 0) await sleep(wait);
    running.push(one(i));
  }
  await Promise.all(running);
  return orders;
}
