import { CANARY } from '../security/inject-canary.js';

/**
 * The configuration of the console tests (in process and in Chromium): a saga with configured
 * colours, a condition, a structural action on a stream with layers, an injected secret (the
 * canary), a saga whose event fails, and a stream saga.
 */

export { CANARY };

/** A handler that returns the parameters it was given (the runner scrubs the secrets it injected). */
export const ECHO_MODULE = `export default {
  name: 'echo',
  actions: { Show: { 0: (input, ctx) => ({ saw: ctx.parameters }) } },
};
`;

export const CONSOLE_CONFIG = `
gateway:
  apis:
    - { path: /orders, runner: shop, public: true }
    - { path: /feed, runner: shop, public: true }
  stream: { defaultWait: 50ms, minWait: 10ms, heartbeat: 1s }
secrets: { from: env, prefix: SAGAWAY_SECRET_ }
states:
  orders: { type: memory }
runners:
  shop:
    handlers: [read, write, ./echo.mjs]
    actions:
      Tag:
        handler: echo
        meta:
          action: { override: Show }
          parameters.channel: { default: web }
          parameters.apiKey: { override: literal-key-shown-masked }
    streams:
      audit: { handler: echo, meta: { parameters.audited: { override: true } } }
    sagas:
      - id: place-order
        path: /orders
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: check }] }
          - id: check
            type: condition
            name: Quantity valid?
            description: qty must be a positive number
            stroke: "#9a6700"
            fill: "#fff3b0"
            expression: "parameters.qty > 0"
            links: [{ to: store, when: [true] }, { to: rejected, when: ["*"] }]
          - id: store
            type: event
            name: Store order
            description: write.Create into the orders state
            stroke: "#1f6feb"
            fill: "#cfe8ff"
            eventMeta: { handler: write, action: Create, version: 0, domain: orders, inputElement: parameters, outputElement: $.order }
            links: [{ to: tag, when: [SUCCESS] }, { to: failed, when: ["*"] }]
          - id: tag
            type: event
            name: Tag the order
            fill: "url(https://evil.example/x)"
            eventMeta:
              action: Tag
              version: 0
              inject: true
              stream: audit
              outputElement: $.tagged
              parameters: { note: "Bearer #{{CANARY}}", token: "#{{CANARY}}" }
            links: [{ to: done, when: [SUCCESS] }, { to: failed, when: ["*"], priority: 2 }]
          - { id: done, type: success, http: 201, fill: "#dafbe1" }
          - { id: rejected, type: fail, error: { code: VALIDATION_FAILED, message: qty must be positive, http: 400 } }
          - { id: failed, type: fail }
      - id: get-order
        path: /orders/:id
        methods: [GET]
        autoFail: true
        steps:
          - { id: start, type: start, links: [{ to: load }] }
          - { id: load, type: event, name: Load order, eventMeta: { handler: read, action: Get, version: 0, domain: orders, inputElement: parameters, outputElement: $.order }, links: [{ to: done }] }
          - { id: done, type: success, outputElement: order }
      - id: feed
        path: /feed
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: page }] }
          - { id: page, type: transform, expression: '{ "list": [{ "n": 1 }, { "n": 2 }, { "n": 3 }] }', links: [{ to: done }] }
          - { id: done, type: success }
`;

/** The environment that holds the canary secret. */
export const CONSOLE_ENV = { SAGAWAY_SECRET_CANARY: CANARY };
