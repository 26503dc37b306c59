import { silentLogger } from '../../src/core/logger.js';
import type { RunStatus } from '../../src/core/messages.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';
import { runMetrics } from '../../src/runner/orchestrator/run-metrics.js';

/**
 * A world for the run routes' tests (issue 22): `sagaway start` in process (a host and its
 * gateway on a real socket of 127.0.0.1) with a journal, and a handler module whose flaky action
 * fails until a flag is set, counting every call.
 */

export const HANDLER = `
const g = globalThis.__runs ??= { fixed: false, calls: [], slow: 0 };
const call = (name, input, ctx) => g.calls.push({ name, key: ctx.idempotencyKey, order: input.parameters?.order });
export default {
  name: 'h',
  actions: {
    Ok: { 0: (input, ctx) => { call('Ok', input, ctx); return { fine: true }; } },
    Reserve: { 0: (input, ctx) => { call('Reserve', input, ctx); return { held: input.parameters?.order ?? null }; } },
    Release: { 0: (input, ctx) => { call('Release', input, ctx); return {}; } },
    Flaky: { 0: async (input, ctx) => {
      call('Flaky', input, ctx);
      if (g.slow) await new Promise((r) => setTimeout(r, g.slow));
      if (!g.fixed) throw Object.assign(new Error('not yet'), { code: 'FLAKY', http: 503 });
      return { fixed: true };
    } },
    Last: { 0: (input, ctx) => { call('Last', input, ctx); return { last: true }; } },
  },
};
`;

export interface Handled {
  fixed: boolean;
  slow: number;
  calls: { name: string; key: string; order?: unknown }[];
}
export const handled = (): Handled => {
  const g = globalThis as unknown as { __runs?: Handled };
  g.__runs ??= { fixed: false, calls: [], slow: 0 };
  return g.__runs;
};
export const resetHandled = (): void => {
  const h = handled();
  h.fixed = false;
  h.slow = 0;
  h.calls.length = 0;
};

/** The saga: one (Reserve, its compensation Release when asked), two (Flaky, with `retry`), three (Last). */
export function config(state: string, options: { retry?: string; runner?: string; compensate?: boolean } = {}): string {
  const compensate = options.compensate ? 'compensate: { eventMeta: { handler: h, action: Release, version: 0 } }' : '';
  return `
gateway:
  apis:
    - { path: /orders, runner: r, public: true }
states:
  ${state}
runners:
  r:
    handlers: [./h.mjs]
    journal: jr
    resumeInterval: 200ms
    ${options.runner ?? ''}
    sagas:
      - id: order
        path: /orders
        methods: [POST]
        autoFail: true
        steps:
          - { id: start, type: start, links: [{ to: one }] }
          - id: one
            type: event
            idempotent: true
            eventMeta: { handler: h, action: Reserve, version: 0, outputElement: $.one }
            ${compensate}
            links: [{ to: two }]
          - id: two
            type: event
            eventMeta: { handler: h, action: Flaky, version: 0, outputElement: $.two }
            ${options.retry ?? ''}
            links: [{ to: three }]
          - { id: three, type: event, idempotent: true, eventMeta: { handler: h, action: Last, version: 0, outputElement: $.three }, links: [{ to: done }] }
          - { id: done, type: success }
`;
}

export interface World {
  host: TestHost;
  gateway: Gateway;
  base: string;
  close(): Promise<void>;
}

export async function world(cfg: string): Promise<World> {
  resetHandled();
  const host = await startTestHost(cfg, { files: { 'h.mjs': HANDLER } });
  const gateway = await createGateway({
    settings: host.settings,
    service: host.host,
    log: silentLogger(),
    status: host.host.statusReader(),
    waits: host.host.waits.signals(),
    ...host.host.runAdmin(),
  });
  const runs = host.host.runAdmin().runs;
  if (runs) runMetrics(gateway.metrics.registry, runs); // as `sagaway start` does
  const { port } = await gateway.listen(0, '127.0.0.1');
  return {
    host,
    gateway,
    base: `http://127.0.0.1:${port}`,
    close: async () => {
      await gateway.close();
      await host.close();
    },
  };
}

/** POST JSON; the status, body and X-Request-Id. */
export async function post(w: World, path: string, body: unknown = {}) {
  const res = await fetch(`${w.base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: (text ? JSON.parse(text) : {}) as Record<string, unknown>,
    id: res.headers.get('x-request-id') ?? '',
  };
}

export async function status(w: World, runId: string): Promise<RunStatus> {
  return (await (await fetch(`${w.base}/api/status/${runId}`)).json()) as RunStatus;
}

/** Poll the run's status until `until` holds (at most 10 s). */
export async function statusWhen(w: World, runId: string, until: (s: RunStatus) => boolean): Promise<RunStatus> {
  const end = Date.now() + 10_000;
  for (;;) {
    const s = await status(w, runId);
    if (until(s)) return s;
    if (Date.now() > end) throw new Error(`run ${runId} still ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
