// The Moleculer services of the suite: items.get (the Map read) and flow.run (the 4-step flow
// written in code: transform -> items.get -> condition -> answer).
import moleculer from 'moleculer';
import { items } from '../lib/items.cjs';

const { MoleculerClientError } = moleculer.Errors;

/** items.get: one Map read; 404 when absent. */
export const itemsService = {
  name: 'items',
  actions: {
    get(ctx) {
      const item = items.get(String(ctx.params.id));
      if (!item) throw new MoleculerClientError('no such item', 404, 'RECORD_NOT_FOUND');
      return item;
    },
  },
};

/** flow.run: the same four steps as sagaway's flow saga and Node-RED's flow. */
export const flowService = {
  name: 'flow',
  actions: {
    async run(ctx) {
      const key = { id: String(ctx.params.id), requestedBy: 'bench' }; // transform
      const item = await ctx.call('items.get', { id: key.id }); // event
      if (!item.active) throw new MoleculerClientError('inactive', 409, 'INACTIVE'); // condition
      return { item, key }; // success
    },
  },
};
