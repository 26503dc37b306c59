export default {
  name: 'catalog',
  actions: {
    Search: { 0: (input, ctx) => ({ query: input.q ?? null, settings: ctx.parameters, domain: ctx.domain }) },
  },
};
