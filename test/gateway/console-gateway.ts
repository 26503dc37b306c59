import { silentLogger } from '../../src/core/logger.js';
import { createGateway } from '../../src/gateway/server.js';
import { startTestHost } from '../../src/testing/index.js';
import { secrets } from '../security/inject-canary.js';
import { CONSOLE_CONFIG, ECHO_MODULE } from './console-fixture.js';

/** A gateway with the console in process (no socket until a test listens), over a test host of `config`. */
export async function consoleGateway(config = CONSOLE_CONFIG) {
  const h = await startTestHost(config, { files: { 'echo.mjs': ECHO_MODULE }, secrets });
  const gw = await createGateway({
    settings: h.settings,
    service: h.host,
    log: silentLogger(),
    status: h.host.statusReader(),
    traces: [h.host.traces],
  });
  return {
    h,
    gw,
    async close() {
      await gw.close();
      await h.close();
    },
  };
}
