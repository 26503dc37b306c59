import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsSystemSettings } from '../../config/settings.js';
import type { Names } from './names.js';

/**
 * The JetStream streams of a nats system: events (a work queue: each event is taken once) and
 * durable replies. Created at connect, or updated to the wanted configuration when they exist
 * with another one (an older version, or a concurrent start). Durations come from the system's
 * settings (eventsMaxAge, repliesMaxAge); the duplicate windows are protocol constants.
 */
export async function ensureStreams(jsm: JetStreamManager, names: Names, settings: NatsSystemSettings): Promise<void> {
  const { RetentionPolicy, StorageType, DiscardPolicy } = await import('@nats-io/jetstream');
  const { nanos } = await import('@nats-io/transport-node');
  const configs = [
    {
      name: names.eventsStream,
      subjects: [names.allEvents],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_age: nanos(settings.eventsMaxAgeMs),
      duplicate_window: nanos(120_000),
    },
    {
      name: names.responsesStream,
      subjects: [names.allResponses],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_age: nanos(settings.repliesMaxAgeMs),
      duplicate_window: nanos(60_000),
    },
  ];
  for (const cfg of configs) {
    try {
      await jsm.streams.add(cfg);
    } catch {
      await jsm.streams.update(cfg.name, cfg);
    }
  }
}
