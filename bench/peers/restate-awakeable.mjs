#!/usr/bin/env node
// Peer "Restate 1.x awakeables" for issue 21's third target (bench/waits/signals-restate.mjs):
// waits/hold parks on an awakeable, the counterpart of sagaway's signal wait. It publishes the
// awakeable's id in a journaled step (a line `{ run, id }` in $WAITBENCH_LOG, read by the load
// side, which resolves it over the ingress: POST /restate/awakeables/<id>/resolve), then, once
// resolved, runs the step after the wait (a line `{ run, t }`), like sagaway's mark handler.
//   PORT=N WAITBENCH_LOG=FILE node bench/peers/restate-awakeable.mjs
import { appendFileSync } from 'node:fs';
import * as restate from '@restatedev/restate-sdk';

// The SDK calls Promise.withResolvers (Node 22+); on Node 20 add the standard one.
Promise.withResolvers ??= function withResolvers() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

const note = (line) => appendFileSync(process.env.WAITBENCH_LOG, JSON.stringify(line) + '\n');

const service = restate.service({
  name: 'waits',
  handlers: {
    hold: async (ctx, run) => {
      const { id, promise } = ctx.awakeable();
      await ctx.run('publish', () => note({ run, id }));
      await promise;
      await ctx.run('mark', () => note({ run, t: Date.now() }));
      return 'ok';
    },
  },
});
restate.serve({ services: [service], port: Number(process.env.PORT) });
for (const s of ['SIGINT', 'SIGTERM']) process.once(s, () => process.exit(0));
