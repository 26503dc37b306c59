// A user handler module (docs/handler-api.md): a name and actions by version.
// defineHandler from 'sagaway' only adds types; a plain object works the same.
export default {
  name: 'inventory',
  actions: {
    Reserve: {
      // version 0: reserves at once
      0: async (input, ctx) => {
        if (!Number.isInteger(input.qty) || input.qty < 1)
          ctx.fail('VALIDATION_FAILED', 'qty must be a positive integer', 400);
        if (input.qty > 10) ctx.fail('OUT_OF_STOCK', `only 10 left of ${input.sku}`, 409);
        return { reserved: input.qty, sku: input.sku };
      },
      // version 2: accepts the reservation and finishes later: answers ACK with a ticket
      2: async (input, ctx) => ctx.ack({ ticket: ctx.idempotencyKey, sku: input.sku }),
    },
  },
};
