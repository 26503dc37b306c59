// sagaway peer: the remote action (answers its input), like the Moleculer worker.
export default { name: 'echo', actions: { Echo: { 0: (input) => input } } };
