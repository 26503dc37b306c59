import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { RawGateway } from './schema.js';

/**
 * `gateway.openapi` compiled (docs/gateway.md#openapi): off, or the servers and license the
 * document names. Without a configured license, the nearest package.json at or above the
 * configuration's folder gives one: the project's own metadata, as `npm init` wrote it.
 */

/** A server of the document. */
export interface OpenApiServer {
  url: string;
  description?: string;
}

/** `info.license` of the document. */
export interface OpenApiLicense {
  name: string;
  identifier?: string;
  url?: string;
}

/** The document's settings; the servers default to the gateway's own address. */
export interface OpenApiSettings {
  servers?: readonly OpenApiServer[];
  license?: OpenApiLicense;
}

/** An SPDX expression (MIT, Apache-2.0, (MIT OR Apache-2.0)), not UNLICENSED nor "SEE LICENSE IN". */
const SPDX = /^\(?[A-Za-z0-9.+-]+(?: (?:AND|OR|WITH) [A-Za-z0-9.+-]+)*\)?$/;

/** Compile `gateway.openapi`: false when off, else its settings. */
export function compileOpenApi(raw: RawGateway['openapi'], baseDir: string): false | OpenApiSettings {
  if (raw === false || (typeof raw === 'object' && raw.enabled === false)) return false;
  const own = typeof raw === 'object' ? raw : {};
  const license = typeof own.license === 'string' ? spdxLicense(own.license) : (own.license ?? packageLicense(baseDir));
  return {
    ...(own.servers ? { servers: own.servers.map((s) => ({ ...s })) } : {}),
    ...(license ? { license } : {}),
  };
}

function spdxLicense(id: string): OpenApiLicense {
  return SPDX.test(id) && id !== 'UNLICENSED' ? { name: id, identifier: id } : { name: id };
}

/** The license of the nearest package.json at or above `dir`, if it names one. */
function packageLicense(dir: string): OpenApiLicense | undefined {
  for (let at = dir; ; at = dirname(at)) {
    let text: string | undefined;
    try {
      text = readFileSync(join(at, 'package.json'), 'utf8');
    } catch {
      text = undefined;
    }
    if (text !== undefined) {
      let license: unknown;
      try {
        license = (JSON.parse(text) as { license?: unknown }).license;
      } catch {
        return undefined;
      }
      return typeof license === 'string' && SPDX.test(license) && license !== 'UNLICENSED'
        ? spdxLicense(license)
        : undefined;
    }
    if (dirname(at) === at) return undefined;
  }
}
