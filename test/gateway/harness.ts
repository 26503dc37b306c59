import { connect } from 'node:net';
import type { Settings } from '../../src/config/settings.js';
import { silentLogger } from '../../src/core/logger.js';
import type { SagaRequest, SagaResult } from '../../src/core/types.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { gatewaySettingsForTest, type GatewaySettingsInput } from './settings-for-test.js';
import { settingsFor } from '../../src/testing/settings.js';
import type { SagaService } from '../../src/core/messages.js';

/** Test harness of the gateway: full Settings around gateway settings, and scriptable services. */

/** The settings of a configuration without runners, with the test gateway (settings-for-test.ts). */
export function settingsWith(gateway: GatewaySettingsInput = {}): Settings {
  return settingsFor({}, { gateway: gatewaySettingsForTest(gateway) });
}

/** A SagaService driven by a function; records every request and counts runs in flight. */
export class ScriptedService implements SagaService {
  readonly calls: Array<{ runner: string; req: SagaRequest }> = [];
  inFlight = 0;
  aborted = 0;

  constructor(private readonly fn: (req: SagaRequest, runner: string, n: number) => Promise<SagaResult> | SagaResult) {}

  async run(runner: string, req: SagaRequest): Promise<SagaResult> {
    this.calls.push({ runner, req });
    this.inFlight++;
    req.signal?.addEventListener('abort', () => this.aborted++, { once: true });
    try {
      return await this.fn(req, runner, this.calls.length);
    } finally {
      this.inFlight--;
    }
  }
}

/** A SUCCESS result. */
export function ok(response: unknown, http = 200): SagaResult {
  return { outcome: 'SUCCESS', http, response };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * A paged feed backend: entries `0..total-1` in pages of `page`; `next` is the index after the
 * page; `continue` until `stopAt` entries have been served (or forever when undefined).
 */
export function feedService(total: number, page: number, extra: Record<string, unknown> = {}): ScriptedService {
  return new ScriptedService((req) => {
    const prev = req.input['previous'];
    const from = typeof prev === 'number' ? prev : 0;
    const to = Math.min(total, from + page);
    const list = [];
    for (let i = from; i < to; i++) list.push({ n: i });
    return ok({ list, next: to, continue: to < total, wait: 0, ...extra });
  });
}

/** Start a gateway with `service` on a free port of 127.0.0.1. */
export async function startGateway(
  service: SagaService,
  gateway: GatewaySettingsInput = {},
): Promise<{ gw: Gateway; base: string; close: () => Promise<void> }> {
  const gw = await createGateway({ settings: settingsWith(gateway), service, log: silentLogger() });
  const { port } = await gw.listen(0, '127.0.0.1');
  return { gw, base: `http://127.0.0.1:${port}`, close: () => gw.close() };
}

/** Send raw bytes over a new TCP connection to 127.0.0.1:`port`; resolves with everything read until close. */
export function rawHttp(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}
