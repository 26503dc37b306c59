import { connect } from 'node:net';

export { skipOrFail } from './states/pg-available.js';

/** The shared NATS server of the integration tests (JetStream on). */
export const NATS = 'nats://127.0.0.1:4222';

/**
 * Why the shared NATS server cannot be used, or undefined when it accepts a connection.
 * Integration tests skip with the reason, or fail under SAGAWAY_REQUIRE_SERVICES=1 (skipOrFail).
 */
export async function natsUnavailableReason(): Promise<string | undefined> {
  const up = await new Promise<boolean>((done) => {
    const s = connect({ port: 4222, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      done(true);
    });
    s.once('error', () => done(false));
  });
  return up ? undefined : `NATS not reachable at ${NATS}`;
}

/** Stream names of a test prefix: its events and replies streams and its outcome buckets (KV_<prefix>_status_<runner>). */
export async function prefixStreams(
  jsm: { streams: { names(): AsyncIterable<string> } },
  prefix: string,
): Promise<string[]> {
  const names: string[] = [];
  for await (const name of jsm.streams.names()) {
    if (name.startsWith(`${prefix}_`) || name.startsWith(`KV_${prefix}_`)) names.push(name);
  }
  return names;
}
