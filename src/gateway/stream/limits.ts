/**
 * Stream admission (DESIGN §7): at most `maxPerClient` open streams per client (the principal,
 * or the source address when anonymous) and `maxStreams` in total. Also keeps the set of open
 * streams, so that closing the gateway can end them.
 */

/** Why a stream was refused. */
export type Refusal = 'TOO_MANY_STREAMS' | 'STREAMS_EXHAUSTED';

/** Something that can be stopped when the gateway closes. */
export interface Stoppable {
  stop(): void;
}

/** Open streams, by client. */
export class StreamRegistry {
  private readonly perClient = new Map<string, number>();
  private readonly open = new Set<Stoppable>();
  private total = 0;

  constructor(
    private readonly maxPerClient: number,
    private readonly maxStreams: number,
  ) {}

  /** Number of admitted streams not yet released. */
  get size(): number {
    return this.total;
  }

  /** Reserve a slot for `client`, or say why not. */
  admit(client: string): Refusal | undefined {
    if (this.total >= this.maxStreams) return 'STREAMS_EXHAUSTED';
    const n = this.perClient.get(client) ?? 0;
    if (n >= this.maxPerClient) return 'TOO_MANY_STREAMS';
    this.perClient.set(client, n + 1);
    this.total++;
    return undefined;
  }

  /** Register an admitted stream. */
  add(stream: Stoppable): void {
    this.open.add(stream);
  }

  /** Release a stream's slot (call once per admitted stream). */
  release(client: string, stream?: Stoppable): void {
    if (stream) this.open.delete(stream);
    this.total--;
    const n = (this.perClient.get(client) ?? 1) - 1;
    if (n <= 0) this.perClient.delete(client);
    else this.perClient.set(client, n);
  }

  /** Stop every open stream. */
  stopAll(): void {
    for (const s of [...this.open]) s.stop();
  }
}
