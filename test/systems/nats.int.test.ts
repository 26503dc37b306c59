import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { runSystemContract } from './system-contract.js';

const NATS = 'nats://127.0.0.1:4222';
const up = await new Promise<boolean>((done) => {
  const s = connect({ port: 4222, host: '127.0.0.1' });
  s.once('connect', () => {
    s.destroy();
    done(true);
  });
  s.once('error', () => done(false));
});
if (!up && process.env['SAGAWAY_REQUIRE_SERVICES'] === '1')
  throw new Error(`required service missing: NATS at ${NATS}`);

const prefix = `c${randomBytes(5).toString('hex')}`;
runSystemContract('nats', {
  systems: { systems: { bus: { type: 'nats', servers: [NATS], prefix } } },
  system: 'bus',
  skip: up ? false : `NATS not reachable at ${NATS}`,
  // the JetStream streams of this run's prefix, on the shared server
  async cleanup() {
    const { connect: natsConnect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await natsConnect({ servers: NATS });
    const jsm = await jetstreamManager(nc);
    for (const s of [`${prefix}_events`, `${prefix}_resp`]) await jsm.streams.delete(s).catch(() => undefined);
    await nc.close();
  },
});
