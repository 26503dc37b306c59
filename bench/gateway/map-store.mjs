// User handler of the gateway benchmarks: Get reads one item from a Map; Page returns a fixed
// batch of feed entries and asks to be polled again; Idle returns nothing and waits long.
export const items = new Map();
for (let i = 0; i < 1000; i++) items.set(String(i), { id: String(i), name: `item ${i}`, active: i % 2 === 0 });

/** The entries one Page call returns (the hand-written SSE server sends the same ones). */
export const PAGE = Array.from({ length: 20 }, (_, i) => ({ id: i, title: `entry ${i}`, done: i % 3 === 0 }));

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
    Page: {
      0: (input) => ({ list: PAGE, next: (Number(input.previous) || 0) + PAGE.length, continue: true, wait: 0 }),
    },
    Idle: { 0: () => ({ list: [], continue: true, wait: '5m' }) },
  },
};
