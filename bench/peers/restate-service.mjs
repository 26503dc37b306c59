#!/usr/bin/env node
// Peer "Restate 1.x", service side: items/get reads the item in a journaled step (ctx.run), so
// the read is durable like sagaway's JetStream event. The restate-server process calls it over
// HTTP/2; clients call the server's ingress: POST /items/get with the id as JSON body.
//   PORT=N node bench/peers/restate-service.mjs
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
import { items } from '../lib/items.cjs';

const service = restate.service({
  name: 'items',
  handlers: {
    get: async (ctx, id) => {
      const item = await ctx.run('read', () => items.get(String(id)) ?? null);
      if (!item) throw new restate.TerminalError('no such item', { errorCode: 404 });
      return item;
    },
  },
});
restate.serve({ services: [service], port: Number(process.env.PORT) });
for (const s of ['SIGINT', 'SIGTERM']) process.once(s, () => process.exit(0));
