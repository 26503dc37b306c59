// A user handler whose Get reads from an in-memory Map: the event step of the benchmark saga.
export const items = new Map();
for (let i = 0; i < 1000; i++) items.set(String(i), { id: String(i), name: `item ${i}`, active: i % 2 === 0 });

export default {
  name: 'mapstore',
  actions: {
    Get: {
      0: (input, ctx) => {
        const item = items.get(input.id);
        if (!item) ctx.fail('RECORD_NOT_FOUND', 'no such item', 404);
        return item;
      },
    },
  },
};
