#!/usr/bin/env node
// Peer "moleculer-web + Moleculer 0.14": an API gateway service (moleculer-web) in front of
// Moleculer services, logger, metrics and tracing off.
//   PORT=N WORKLOAD=oneshot|flow node bench/peers/moleculer-web.mjs       one local broker
//   PORT=N WORKLOAD=remote NATS=nats://127.0.0.1:4222 NAMESPACE=x node ...  gateway node only;
//     the items service runs in another process (moleculer-node.mjs) over the NATS transporter
import { ServiceBroker } from 'moleculer';
import ApiGateway from 'moleculer-web';
import { flowService, itemsService } from './moleculer-services.mjs';

const workload = process.env.WORKLOAD ?? 'oneshot';
const remote = workload === 'remote';
const broker = new ServiceBroker({
  nodeID: `gateway-${process.pid}`,
  namespace: process.env.NAMESPACE ?? '',
  logger: false,
  metrics: false,
  tracing: false,
  transporter: remote ? process.env.NATS : null,
});

const aliases = {
  oneshot: { 'GET items/:id': 'items.get' },
  flow: { 'GET items/:id': 'flow.run' },
  remote: { 'GET items/:id': 'items.get' },
}[workload];

broker.createService({
  name: 'api',
  mixins: [ApiGateway],
  settings: {
    port: Number(process.env.PORT),
    ip: '127.0.0.1',
    logRequest: false,
    logResponse: false,
    log4XXResponses: false,
    logRequestParams: null,
    logResponseData: null,
    routes: [{ path: '/', mappingPolicy: 'restrict', aliases }],
  },
});
if (!remote) broker.createService(itemsService);
if (workload === 'flow') broker.createService(flowService);
await broker.start();
if (remote) await broker.waitForServices(['items']);
