/**
 * Source of a user handler module (`probe`) for tests: each action does one observable thing.
 * Written as module text so that tests load it the way users' modules are loaded.
 */
export const PROBE_HANDLER = `
export const calls = [];
export default {
  name: 'probe',
  actions: {
    Echo: { 0: (input) => input },
    Const: { 0: (_input, ctx) => ctx.parameters.value },
    Seen: { 0: (input, ctx) => ({ parameters: ctx.parameters, domain: ctx.domain ?? null, input }) },
    Fail: { 0: (_input, ctx) => ctx.fail(ctx.parameters.code ?? 'BOOM', ctx.parameters.message ?? 'it failed', ctx.parameters.http) },
    Crash: { 0: () => { throw new Error('internal detail at /srv/app/secret.js'); } },
    Ack: { 0: (_input, ctx) => ctx.ack(ctx.parameters.value ?? { ticket: ctx.idempotencyKey }) },
    Slow: {
      0: (_input, ctx) => new Promise((resolve, reject) => {
        const t = setTimeout(() => resolve({ slow: true }), ctx.parameters.ms ?? 1000);
        ctx.signal.addEventListener('abort', () => { clearTimeout(t); globalThis.__probeAborted = (globalThis.__probeAborted ?? 0) + 1; reject(new Error('aborted')); });
      }),
    },
    Reserve: { 0: () => ({ v: 0 }), 2: () => ({ v: 2 }) },
    Leak: {
      0: (_input, ctx) => {
        ctx.log.error({ header: ctx.parameters.header }, 'calling with ' + ctx.parameters.header);
        throw Object.assign(new Error('upstream refused ' + ctx.parameters.header), { code: 'UPSTREAM_REFUSED', http: 502 });
      },
    },
  },
};
`;
