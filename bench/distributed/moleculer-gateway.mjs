// Moleculer peer: moleculer-web in front of the remote service, NATS transporter.
import moleculer from 'moleculer';
import ApiGateway from 'moleculer-web';

const broker = new moleculer.ServiceBroker({
  nodeID: `gateway-${process.pid}`,
  transporter: process.env.NATS_URL,
  namespace: process.env.NS,
  logger: false,
});
broker.createService({
  name: 'api',
  mixins: [ApiGateway],
  settings: {
    port: Number(process.env.PORT),
    ip: '127.0.0.1',
    routes: [{ path: '/api', aliases: { 'GET echo': 'worker.echo' } }],
  },
});
await broker.start();
await broker.waitForServices(['worker']);
process.send?.('ready');
process.once('SIGTERM', () => broker.stop().then(() => process.exit(0)));
