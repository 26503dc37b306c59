/**
 * A saga that undoes two steps when it fails (issue 24 item 3), for the console's Chromium test
 * and screenshots: `reserve` (its first try fails, retried) and `charge` both have a compensate;
 * `ship` is a pivot that fails, so both are undone: the release succeeds, the refund is refused
 * twice (its own retry), and the run ends with `compensation: PARTIAL`. Eight steps, so the graph
 * is taller than its box; a stream saga with one long line.
 */

export const SHOP_MODULE = `const tries = new Map();
export default {
  name: 'shop',
  actions: {
    Reserve: { 0: (input, ctx) => {
      const n = (tries.get(ctx.idempotencyKey) ?? 0) + 1;
      tries.set(ctx.idempotencyKey, n);
      if (n === 1) ctx.fail('STOCK_BUSY', 'the stock record is busy', 503);
      return { sku: input.sku, qty: input.qty };
    } },
    Release: { 0: () => ({ released: true }) },
    Charge: { 0: () => ({ chargeId: 'ch_1' }) },
    Refund: { 0: (input, ctx) => ctx.fail('REFUND_REFUSED', 'the bank refused the refund', 502) },
    Ship: { 0: (input, ctx) => ctx.fail('NO_ADDRESS', 'the order has no address', 400) },
  },
};
`;

export const SHOP_CONFIG = `
gateway:
  apis:
    - { path: /orders, runner: shop, public: true }
    - { path: /news, runner: shop, public: true }
  stream: { defaultWait: 50ms, minWait: 10ms, heartbeat: 1s }
runners:
  shop:
    handlers: [./shop.mjs]
    sagas:
      - id: place-order
        path: /orders
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: check }] }
          - { id: check, type: condition, expression: 'parameters.qty > 0', links: [{ to: order, when: [true] }, { to: rejected, when: ['*'] }] }
          - { id: order, type: transform, expression: '{ "sku": parameters.sku, "qty": parameters.qty }', outputElement: $.order, links: [{ to: reserve }] }
          - id: reserve
            type: event
            eventMeta: { handler: shop, action: Reserve, version: 0, inputElement: order, outputElement: $.reservation }
            retry: { attempts: 3, backoff: 5ms, on: [STOCK_BUSY] }
            compensate: { eventMeta: { handler: shop, action: Release, version: 0, inputElement: reservation } }
            links: [{ to: charge, when: [SUCCESS] }, { to: failed, when: ['*'] }]
          - id: charge
            type: event
            eventMeta: { handler: shop, action: Charge, version: 0, outputElement: $.charge }
            compensate:
              eventMeta: { handler: shop, action: Refund, version: 0, inputElement: charge }
              retry: { attempts: 2, backoff: 5ms, on: [REFUND_REFUSED] }
            links: [{ to: ship, when: [SUCCESS] }, { to: failed, when: ['*'] }]
          - id: ship
            type: event
            pivot: true
            eventMeta: { handler: shop, action: Ship, version: 0 }
            links: [{ to: done, when: [SUCCESS] }, { to: failed, when: ['*'] }]
          - { id: done, type: success, http: 201 }
          - { id: rejected, type: fail, error: { code: VALIDATION_FAILED, message: qty must be positive, http: 400 } }
          - { id: failed, type: fail }
      - id: news
        path: /news
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: page }] }
          - { id: page, type: transform, expression: '{ "list": [{ "text": $join([1..60].("word" & $string($)), " ") }] }', links: [{ to: done }] }
          - { id: done, type: success }
`;
