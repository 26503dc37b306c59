import type { Settings } from '../config/settings.js';
import { DEFAULT_CONSOLE } from '../config/settings.js';

/**
 * What `sagaway start` and `sagaway gateway` print once listening (issue 24): where the console
 * is (when it is on) and the API paths served, so that a first `npm start` says where to go
 * instead of only "Server listening at …".
 */

/** The start line's fields, and a second line's message that says them in words. */
export interface StartedLine {
  /** `console: http://127.0.0.1:8080/console · APIs: GET,POST /api/request/todos …` */
  message: string;
  /** the console's URL, when this gateway serves one */
  console?: string;
  /** each API entry: its methods and its request-form URL path */
  apis: string[];
}

/** The base URL a local browser reaches: a wildcard address is shown as `localhost`. */
export function baseUrl(host: string | undefined, port: number): string {
  const name = host === undefined ? '127.0.0.1' : host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return `http://${name.includes(':') ? `[${name}]` : name}:${port}`;
}

/** The start line for a gateway of `settings` listening at `host`:`port`. */
export function startedLine(settings: Settings, host: string | undefined, port: number): StartedLine {
  const base = baseUrl(host, port);
  const shown = settings.gateway.console ?? DEFAULT_CONSOLE;
  const consoleUrl = shown.enabled ? base + shown.path : undefined;
  const apis = settings.gateway.apis.map(
    (a) => `${a.methods ? a.methods.join(',') : '*'} /api/request${a.path === '/' ? '' : a.path}`,
  );
  const served = apis.length ? `APIs: ${apis.join(' · ')} (each also as /api/stream/…)` : 'no API';
  const message = `${consoleUrl ? `console: ${consoleUrl} · ` : ''}${served}`;
  return { message, ...(consoleUrl ? { console: consoleUrl } : {}), apis };
}
