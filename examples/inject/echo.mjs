// Shows what an action receives after inject. It never returns the Authorization value:
// even if it did, the runner would scrub the secret from the output.
export default {
  name: 'echo',
  actions: {
    Show: {
      0: (input, ctx) => ({
        domain: ctx.domain,
        parameters: { ...ctx.parameters, authorization: ctx.parameters.authorization ? '(set)' : '(missing)' },
      }),
    },
  },
};
