/* global clearTimeout */
// The worker's handler of the fault suite: an order's steps. Every execution appends one line to
// $CHAOS_LOG (executions per step key: at least once is allowed), and its effect is a ledger row
// keyed by the step's idempotency key, written with that key (the documented way to apply an
// effect once): the suite counts effects per order and step from the ledger.
import { appendFileSync } from 'node:fs';

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });

function step(name) {
  return async (input, ctx) => {
    const key = ctx.idempotencyKey;
    const order = typeof input?.order === 'string' ? input.order : '';
    appendFileSync(process.env.CHAOS_LOG, `${JSON.stringify({ k: key, o: order, s: name })}\n`);
    await sleep(Number(process.env.CHAOS_STEP_MS ?? 60), ctx.signal);
    await ctx.state('ledger').create(key, { order, step: name, run: key.split(':')[0] }, { idempotencyKey: key });
    return { [name]: true };
  };
}

export default {
  name: 'shop',
  actions: {
    Reserve: { 0: step('reserve') },
    Charge: { 0: step('charge') },
    Release: { 0: step('release') },
  },
};
