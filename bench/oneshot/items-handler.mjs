// sagaway user handler of the suite: Get reads one item from the shared Map (bench/lib/items.cjs).
import { items } from '../lib/items.cjs';

export default {
  name: 'mapstore',
  actions: {
    Get: {
      0: (input, ctx) => {
        const item = items.get(String(input.id));
        if (!item) ctx.fail('RECORD_NOT_FOUND', 'no such item', 404);
        return item;
      },
    },
  },
};
