// Moleculer peer: the remote service (one action that answers its params), NATS transporter.
import moleculer from 'moleculer';

const broker = new moleculer.ServiceBroker({
  nodeID: `worker-${process.pid}`,
  transporter: process.env.NATS_URL,
  namespace: process.env.NS,
  logger: false,
});
broker.createService({ name: 'worker', actions: { echo: (ctx) => ({ out: ctx.params }) } });
await broker.start();
process.send?.('ready');
process.once('SIGTERM', () => broker.stop().then(() => process.exit(0)));
