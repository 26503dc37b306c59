// The pricing handler: version 1 is list price, version 2 adds a volume discount.
const LIST = { A1: 12.5, B2: 40, C3: 99.9 };

function price(sku, ctx) {
  const p = LIST[sku];
  if (p === undefined) ctx.fail('UNKNOWN_SKU', `no price for ${sku}`, 404);
  return p;
}

export default {
  name: 'pricing',
  actions: {
    Quote: {
      1: (input, ctx) => ({
        sku: input.sku,
        price: price(input.sku, ctx),
        currency: ctx.parameters.currency,
        pid: process.pid,
      }),
      2: (input, ctx) => {
        const qty = Number(input.qty ?? 1);
        const unit = price(input.sku, ctx) * (qty >= 10 ? 0.9 : 1);
        return {
          sku: input.sku,
          qty,
          total: Math.round(unit * qty * 100) / 100,
          currency: ctx.parameters.currency,
          pid: process.pid,
        };
      },
    },
  },
};
