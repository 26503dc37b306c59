import { randomBytes } from 'node:crypto';
import { NATS, natsUnavailableReason, skipOrFail, prefixStreams } from '../nats-available.js';
import { runSystemContract } from './system-contract.js';

const natsDown = await natsUnavailableReason();

const prefix = `c${randomBytes(5).toString('hex')}`;
runSystemContract('nats', {
  systems: { systems: { bus: { type: 'nats', servers: [NATS], prefix } } },
  system: 'bus',
  skip: natsDown ? skipOrFail(natsDown) : false,
  // the JetStream streams of this run's prefix, on the shared server
  async cleanup() {
    const { connect: natsConnect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await natsConnect({ servers: NATS });
    const jsm = await jetstreamManager(nc);
    for (const s of await prefixStreams(jsm, prefix)) await jsm.streams.delete(s).catch(() => undefined);
    await nc.close();
  },
});
