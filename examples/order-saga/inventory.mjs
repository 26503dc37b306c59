// The stock of the order-saga example (docs/handler-api.md): Reserve takes items out of the
// `stock` state, Release (the compensation) puts them back. Both write with the step's
// idempotency key, so a redelivered event, or a retried undo, changes the stock once.
export default {
  name: 'inventory',
  actions: {
    Reserve: {
      0: async (input, ctx) => {
        if (typeof input?.sku !== 'string' || !Number.isInteger(input.qty) || input.qty < 1)
          ctx.fail('VALIDATION_FAILED', 'order needs { sku, qty } with qty a positive integer', 400);
        const stock = ctx.state('stock');
        const item = await stock.get(input.sku);
        if (!item) ctx.fail('UNKNOWN_SKU', `no item ${input.sku}`, 404);
        if (item.data.available < input.qty) ctx.fail('OUT_OF_STOCK', `only ${item.data.available} left`, 409);
        await stock.update(
          input.sku,
          { available: item.data.available - input.qty },
          { expectedVersion: item.version, idempotencyKey: ctx.idempotencyKey },
        );
        return { sku: input.sku, qty: input.qty };
      },
    },
    Release: {
      0: async (input, ctx) => {
        const stock = ctx.state('stock');
        const item = await stock.get(input.sku);
        if (!item) ctx.fail('UNKNOWN_SKU', `no item ${input.sku}`, 404);
        await stock.update(
          input.sku,
          { available: item.data.available + input.qty },
          { expectedVersion: item.version, idempotencyKey: ctx.idempotencyKey },
        );
        return { released: input.qty };
      },
    },
  },
};
