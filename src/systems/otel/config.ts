import type { TracingSettings } from '../../config/settings.js';
import { isForbiddenKey } from '../../core/path.js';

/** Tracing as a process runs it: `observability.tracing` with the `OTEL_*` variables filling what it leaves unset. */
export interface ResolvedTracing {
  /** the OTLP/HTTP traces URL (`.../v1/traces`) */
  url: string;
  serviceName: string;
  /** share of new traces recorded, 0..1 */
  sampleRatio: number;
  headers: Record<string, string>;
}

const DEFAULT_ENDPOINT = 'http://localhost:4318';

/**
 * Whether and how this process traces (docs/tracing.md). `enabled` in the file wins; without it
 * the standard variables decide: on when `OTEL_TRACES_EXPORTER` is `otlp` or an OTLP endpoint
 * variable is set, off when `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. Only OTLP
 * over HTTP is exported. Undefined: tracing is off (nothing is loaded).
 */
export function resolveTracing(
  own: TracingSettings | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ResolvedTracing | undefined {
  const exporter = env['OTEL_TRACES_EXPORTER']?.trim().toLowerCase();
  const tracesEndpoint = nonEmpty(env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']);
  const endpoint = nonEmpty(env['OTEL_EXPORTER_OTLP_ENDPOINT']);
  const byEnv =
    env['OTEL_SDK_DISABLED']?.trim().toLowerCase() !== 'true' &&
    exporter !== 'none' &&
    (exporter === 'otlp' || tracesEndpoint !== undefined || endpoint !== undefined);
  if (!(own?.enabled ?? byEnv)) return undefined;
  // The file's endpoint is a base URL like OTEL_EXPORTER_OTLP_ENDPOINT; the _TRACES_ variable is the full URL.
  const url =
    own?.endpoint !== undefined ? tracesUrl(own.endpoint) : (tracesEndpoint ?? tracesUrl(endpoint ?? DEFAULT_ENDPOINT));
  return {
    url,
    serviceName: own?.serviceName ?? nonEmpty(env['OTEL_SERVICE_NAME']) ?? 'sagaway',
    sampleRatio: own?.sampleRatio ?? ratioOf(env['OTEL_TRACES_SAMPLER_ARG']) ?? 1,
    headers: headersOf(own?.headers, env['OTEL_EXPORTER_OTLP_TRACES_HEADERS'] ?? env['OTEL_EXPORTER_OTLP_HEADERS']),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v === undefined || v === '' ? undefined : v;
}

function tracesUrl(base: string): string {
  let end = base.length;
  while (end > 0 && base[end - 1] === '/') end--;
  return base.slice(0, end) + '/v1/traces';
}

function ratioOf(value: string | undefined): number | undefined {
  const n = value === undefined ? NaN : Number(value);
  return Number.isFinite(n) && n >= 0 && n <= 1 ? n : undefined;
}

/** The file's headers, else `k=v,k2=v2` (values URL-encoded, as the OTLP spec writes them). */
function headersOf(own: Readonly<Record<string, string>> | undefined, env: string | undefined): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (own !== undefined) {
    for (const [k, v] of Object.entries(own)) if (!isForbiddenKey(k)) out[k.toLowerCase()] = v;
    return out;
  }
  for (const pair of (env ?? '').split(',').slice(0, 32)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    const key = pair.slice(0, eq).trim().toLowerCase();
    if (key === '' || isForbiddenKey(key)) continue;
    try {
      out[key] = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      out[key] = pair.slice(eq + 1).trim();
    }
  }
  return out;
}
