import type { OpenApiServer, OpenApiSettings } from '../../config/compile-openapi.js';
import type { GatewaySettings } from '../../config/settings.js';

/**
 * The parts of the OpenAPI document that describe the deployment rather than the sagas: where
 * clients reach it (`servers`), its `info.license`, and its components cut to those the paths
 * use (a linter such as Redocly's recommended ruleset warns about an unused component).
 */

type Json = Record<string, unknown>;

/** The configured `gateway.openapi`, or the defaults when it is `true` or absent. */
export function openApiSettings(gateway: GatewaySettings): OpenApiSettings {
  return typeof gateway.openapi === 'object' ? gateway.openapi : {};
}

/**
 * `gateway.openapi.servers`, else this gateway's own address: the configured host (an
 * any-address bind is reached as localhost) and the port it listens on.
 */
export function serversOf(gateway: GatewaySettings, port: number | undefined): OpenApiServer[] {
  const own = openApiSettings(gateway).servers;
  if (own !== undefined) return own.map((s) => ({ ...s }));
  const host = gateway.host === '0.0.0.0' || gateway.host === '::' || gateway.host === '' ? 'localhost' : gateway.host;
  const shown = host.includes(':') ? `[${host}]` : host;
  return [
    {
      url: `http://${shown}:${port ?? gateway.port ?? 8080}`,
      description: 'this gateway (gateway.host and its port); gateway.openapi.servers names public ones',
    },
  ];
}

/** The `$ref`s in `value`, as `section/name` of the components they name. */
function refsIn(value: unknown, out: Set<string>): void {
  if (Array.isArray(value)) for (const v of value) refsIn(v, out);
  else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string' && child.startsWith('#/components/')) {
        const [section, name] = child.slice('#/components/'.length).split('/');
        out.add(`${section}/${name}`);
      } else refsIn(child, out);
    }
  }
}

/**
 * `components` without what `paths` does not reach, directly or through other components.
 * Security schemes stay: operations name them in `security`, not by `$ref`.
 */
export function usedComponents(paths: Json, components: Record<string, Json>): Record<string, Json> {
  const used = new Set<string>();
  refsIn(paths, used);
  // Components may refer to others (a response to a schema): follow until nothing new.
  for (let grew = true; grew;) {
    grew = false;
    for (const id of [...used]) {
      const [section, name] = id.split('/') as [string, string];
      const before = used.size;
      refsIn(components[section]?.[name], used);
      if (used.size > before) grew = true;
    }
  }
  const out: Record<string, Json> = {};
  for (const [section, entries] of Object.entries(components)) {
    if (section === 'securitySchemes') {
      if (Object.keys(entries).length > 0) out[section] = entries;
      continue;
    }
    const kept = Object.fromEntries(Object.entries(entries).filter(([name]) => used.has(`${section}/${name}`)));
    if (Object.keys(kept).length > 0) out[section] = kept;
  }
  return out;
}
