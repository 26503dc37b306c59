#!/usr/bin/env node
// The remote Moleculer node of the remote-step workload: items.get behind the NATS transporter.
//   NATS=nats://127.0.0.1:4222 NAMESPACE=x node bench/peers/moleculer-node.mjs
import { ServiceBroker } from 'moleculer';
import { itemsService } from './moleculer-services.mjs';

const broker = new ServiceBroker({
  nodeID: `items-${process.pid}`,
  namespace: process.env.NAMESPACE ?? '',
  logger: false,
  metrics: false,
  tracing: false,
  transporter: process.env.NATS,
});
broker.createService(itemsService);
await broker.start();
console.log('ready');
